"""Catalogs for the checks that bring one to the appliance: made by tools/make-vm-catalog --stick,
changed by the check, then either put in a FAT32 image by tools/make-stick (a USB stick to
hot-plug: cached_stick) or kept as a folder, signed with a test minisign key, for a web server to
serve (cached_folder: the network check). Both are cached in CACHE by the hash of the scripts that
make them and the check's own key (so a changed recipe makes a new one)."""
import hashlib
import json
import os
import shutil
import subprocess

from .image import CACHE, ROOT

TOOLS = {n: os.path.join(ROOT, "tools", n) for n in ("make-vm-catalog", "make-stick", "sign-manifest")}


def _digest(tools, key):
    return hashlib.sha256(b"".join(open(TOOLS[t], "rb").read() for t in tools) + key.encode()).hexdigest()[:16]


def _make_catalog(folder, catalog_args, edit):
    """make-vm-catalog FOLDER --stick *catalog_args, then edit(folder, manifest) changes the folder
    and the manifest (a dict, written back)."""
    shutil.rmtree(folder, ignore_errors=True)
    subprocess.run([TOOLS["make-vm-catalog"], folder, "--stick", *catalog_args], check=True, stdout=subprocess.DEVNULL)
    mpath = os.path.join(folder, "vitrine", "manifest.json")
    m = json.load(open(mpath))
    edit(folder, m)
    with open(mpath, "w") as f:
        json.dump(m, f, indent=1)


def cached_stick(name, key, catalog_args, edit):
    """The path of the stick image `name`-<hash>.img, made once: make-vm-catalog FOLDER --stick
    *catalog_args, then edit(folder, manifest) changes the folder and the manifest (a dict, written
    back), then make-stick."""
    stick = os.path.join(CACHE, f"{name}-{_digest(('make-vm-catalog', 'make-stick'), key)}.img")
    if os.path.exists(stick):
        return stick
    os.makedirs(CACHE, exist_ok=True)
    folder = stick[:-4]
    _make_catalog(folder, catalog_args, edit)
    subprocess.run([TOOLS["make-stick"], stick + ".tmp", folder], check=True, stdout=subprocess.DEVNULL)
    os.replace(stick + ".tmp", stick)
    shutil.rmtree(folder, ignore_errors=True)
    return stick


def test_key():
    """(secret key path, public key path, the public key's line for import.trustedKeys) of the VM
    tests' own minisign key, made once without a password (tools/sign-manifest --new-key DIR -W)."""
    folder = os.path.join(CACHE, "minisign-test-key")
    sec, pub = os.path.join(folder, "vitrine.key"), os.path.join(folder, "vitrine.pub")
    if not (os.path.exists(sec) and os.path.exists(pub)):
        shutil.rmtree(folder, ignore_errors=True)
        tmp = folder + ".tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        subprocess.run([TOOLS["sign-manifest"], "--new-key", tmp, "-W"], check=True, stdin=subprocess.DEVNULL,
                       stdout=subprocess.DEVNULL)
        os.replace(tmp, folder)
    return sec, pub, open(pub).read().strip().splitlines()[-1]


def cached_folder(name, key, catalog_args, edit, sign=True):
    """The path of a signed catalog folder `name`-<hash>/vitrine (a stick's vitrine/ folder:
    manifest.json, manifest.json.minisig, media/), made once: make-vm-catalog --stick *catalog_args,
    edit(folder, manifest), then tools/sign-manifest with test_key() unless sign is False. The hash
    covers the public key too, so a new key makes a new signature."""
    sec, _, pub_line = test_key()
    folder = os.path.join(CACHE, f"{name}-{_digest(('make-vm-catalog', 'sign-manifest'), key + pub_line + str(sign))}")
    done = os.path.join(folder, ".done")
    if os.path.exists(done):
        return os.path.join(folder, "vitrine")
    os.makedirs(CACHE, exist_ok=True)
    _make_catalog(folder, catalog_args, edit)
    if sign:
        subprocess.run([TOOLS["sign-manifest"], sec, folder], check=True, stdout=subprocess.DEVNULL)
    open(done, "w").close()
    return os.path.join(folder, "vitrine")
