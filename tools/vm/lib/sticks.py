"""USB stick images for the checks that hot-plug one: a catalog made by tools/make-vm-catalog
--stick, changed by the check, in a FAT32 image by tools/make-stick, cached in CACHE by the hash of
those two scripts and the check's own key (so a changed recipe makes a new image)."""
import hashlib
import json
import os
import shutil
import subprocess

from .image import CACHE, ROOT


def cached_stick(name, key, catalog_args, edit):
    """The path of the stick image `name`-<hash>.img, made once: make-vm-catalog FOLDER --stick
    *catalog_args, then edit(folder, manifest) changes the folder and the manifest (a dict, written
    back), then make-stick."""
    tools = [os.path.join(ROOT, "tools", n) for n in ("make-vm-catalog", "make-stick")]
    digest = hashlib.sha256(b"".join(open(t, "rb").read() for t in tools) + key.encode()).hexdigest()[:16]
    stick = os.path.join(CACHE, f"{name}-{digest}.img")
    if os.path.exists(stick):
        return stick
    os.makedirs(CACHE, exist_ok=True)
    folder = os.path.join(CACHE, f"{name}-{digest}")
    shutil.rmtree(folder, ignore_errors=True)
    subprocess.run([tools[0], folder, "--stick", *catalog_args], check=True, stdout=subprocess.DEVNULL)
    mpath = os.path.join(folder, "vitrine", "manifest.json")
    m = json.load(open(mpath))
    edit(folder, m)
    with open(mpath, "w") as f:
        json.dump(m, f, indent=1)
    subprocess.run([tools[1], stick + ".tmp", folder], check=True, stdout=subprocess.DEVNULL)
    os.replace(stick + ".tmp", stick)
    shutil.rmtree(folder, ignore_errors=True)
    return stick
