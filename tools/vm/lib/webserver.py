"""The VM checks' web server on the host: Debian's nginx (nginx-light, installed by tools/setup)
serving a folder over HTTPS on 127.0.0.1, on a free port, with the certificate of a throwaway CA
made by the openssl CLI. The guest reaches it at https://10.0.2.100:8443/ through QEMU's
restricted user network: lib/qemu.py's guestfwd runs lib/guestfwd.py for each connection, which
reads the port from the file start() writes.

    web = NginxServer(names=("IP:10.0.2.100",))   # the CA and the server certificate, now
    web.serve("/path/to/stick/vitrine")           # a copy of it at /catalog/
    web.start(port_file)                          # nginx runs; the port is in port_file
    web.ca_pem                                    # the CA certificate (PEM bytes) for the client
    web.access_log()                              # the requests so far: time, status, bytes, path…
    web.stop()                                    # SIGTERM to its PID; start() again reuses the certificates
    web.close()                                   # stop() and remove its folder

Everything it writes (configuration, certificates, pid file, logs, nginx's temp folders) is in
its own temporary folder. nginx runs as one process (`daemon off; master_process off`), started
by this object and stopped by its PID only; as `nobody:nogroup` when the harness is root (the
folder is theirs), else as the harness's user. The same design as the Swift tests' NginxServer
fixture (HTTPFetchTests).

The certificates are made when the object is (valid from that second for 2 days): the guest's
clock must not be behind it, so make the object a while before the guest connects (a check's
prepare()), not in the same second.

Access log lines: `$msec $status $body_bytes_sent "$request" "$http_if_none_match" "$http_range"`.
nginx writes a request's line after it has sent the response, so access_log(settle=...) rereads
the log until it has stopped growing.
"""
import grp
import os
import pwd
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time

NGINX = "/usr/sbin/nginx"
OPENSSL = "/usr/bin/openssl"
GUEST_IP = "10.0.2.100"   # what the guest connects to (lib/qemu.py guestfwd)
GUEST_PORT = 8443
LOG_LINE = re.compile(r'^(?P<t>[\d.]+) (?P<status>\d{3}) (?P<bytes>\d+) "(?P<method>\S+) (?P<path>\S+)[^"]*" '
                      r'"(?P<inm>[^"]*)" "(?P<range>[^"]*)"$')


class WebServerError(RuntimeError):
    """The server could not be set up or started (a missing program, a failed openssl or nginx)."""


def available():
    """None when nginx and openssl are installed, else why not (for a check's prepare())."""
    missing = [p for p in (NGINX, OPENSSL) if not os.access(p, os.X_OK)]
    return f"{' and '.join(missing)} missing: run tools/setup" if missing else None


def free_port():
    """A TCP port on 127.0.0.1 that nothing listens on right now (the kernel's pick)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def accepts(port, timeout=0.2):
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout):
            return True
    except OSError:
        return False


class NginxServer:
    def __init__(self, names=(f"IP:{GUEST_IP}",), folder=None):
        """names: the server certificate's subjectAltNames besides DNS:localhost and IP:127.0.0.1
        (openssl syntax: "IP:10.0.2.100", "DNS:cms.example"). folder: where to work (default: a new
        /tmp/vitrine-nginx-* folder). Raises WebServerError when nginx or openssl is missing or
        openssl fails."""
        why = available()
        if why:
            raise WebServerError(why)
        self.folder = folder or tempfile.mkdtemp(prefix="vitrine-nginx-")
        self.root = os.path.join(self.folder, "www")
        self.ca_file = os.path.join(self.folder, "ca.crt")
        self.names = ["DNS:localhost", "IP:127.0.0.1", *names]
        self.port = None
        self.proc = None
        self.port_file = None
        for sub in ("www", "tmp", "logs"):
            os.makedirs(os.path.join(self.folder, sub), exist_ok=True)
        self._certificates()
        self.user, self.group = ("nobody", "nogroup") if os.geteuid() == 0 else (None, None)
        self._own()

    # ------------------------------------------------------------ setup
    def _openssl(self, *args):
        r = subprocess.run([OPENSSL, *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if r.returncode != 0:
            raise WebServerError(f"openssl {args[0]} failed ({r.returncode}): {r.stdout.strip()[-400:]}")

    def _certificates(self):
        f = self.folder
        ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        self._openssl("req", "-x509", *ec, "-keyout", f"{f}/ca.key", "-out", self.ca_file, "-days", "2",
                      "-subj", "/CN=Vitrine VM test CA", "-addext", "basicConstraints=critical,CA:TRUE",
                      "-addext", "keyUsage=critical,keyCertSign,cRLSign")
        self._openssl("req", *ec, "-keyout", f"{f}/server.key", "-out", f"{f}/server.csr", "-subj", "/CN=vitrine-vm-test")
        with open(f"{f}/server.ext", "w") as ext:
            ext.write(f"subjectAltName={','.join(self.names)}\nbasicConstraints=CA:FALSE\n"
                      "keyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\n")
        self._openssl("x509", "-req", "-in", f"{f}/server.csr", "-CA", self.ca_file, "-CAkey", f"{f}/ca.key",
                      "-CAcreateserial", "-out", f"{f}/server.crt", "-days", "2", "-extfile", f"{f}/server.ext")
        os.remove(f"{f}/ca.key")  # nothing else is ever signed with it

    def _own(self):
        """The folder and all in it belong to the user nginx runs as."""
        if self.user is None:
            return
        uid, gid = pwd.getpwnam(self.user).pw_uid, grp.getgrnam(self.group).gr_gid
        for top, dirs, files in os.walk(self.folder):
            os.chown(top, uid, gid)
            for n in files:
                os.chown(os.path.join(top, n), uid, gid, follow_symlinks=False)

    def _config(self):
        f = self.folder
        conf = f"""daemon off;
master_process off;
worker_processes 1;
pid {f}/nginx.pid;
error_log {f}/logs/error.log info;
events {{ worker_connections 64; }}
http {{
    log_format vm '$msec $status $body_bytes_sent "$request" "$http_if_none_match" "$http_range"';
    access_log {f}/logs/access.log vm;
    client_body_temp_path {f}/tmp/body;
    proxy_temp_path {f}/tmp/proxy;
    fastcgi_temp_path {f}/tmp/fastcgi;
    uwsgi_temp_path {f}/tmp/uwsgi;
    scgi_temp_path {f}/tmp/scgi;
    default_type application/octet-stream;
    types {{ application/json json; }}
    sendfile on;
    keepalive_timeout 30;
    server {{
        listen 127.0.0.1:{self.port} ssl;
        ssl_certificate {f}/server.crt;
        ssl_certificate_key {f}/server.key;
        root {f}/www;
        location /catalog/ {{ alias {f}/www/; }}
    }}
}}
"""
        with open(f"{f}/nginx.conf", "w") as out:
            out.write(conf)

    # ------------------------------------------------------------ use
    @property
    def ca_pem(self):
        """The CA's certificate (PEM), for the client's caFile."""
        with open(self.ca_file, "rb") as f:
            return f.read()

    def url(self, host=GUEST_IP, port=GUEST_PORT):
        """The served folder's URL as a client at host:port sees it (default: the guest's view)."""
        return f"https://{host}:{port}/catalog/"

    def serve(self, src):
        """Replaces what /catalog/ serves with a copy of the folder `src` (a stick's vitrine/ folder:
        manifest.json, manifest.json.minisig, media/…)."""
        shutil.rmtree(self.root)
        shutil.copytree(src, self.root, symlinks=False)
        self._own()

    def start(self, port_file=None, timeout=10):
        """Starts nginx on a free port and waits (timeout s) until it accepts connections; then
        writes the port to port_file (atomically), if given. Retries another port when the chosen
        one was taken meanwhile. Returns the port; raises WebServerError."""
        if self.proc is not None:
            raise WebServerError("nginx is already running")
        last = ""
        for _ in range(5):
            self.port = free_port()
            self._config()
            self._own()
            err = os.path.join(self.folder, "logs", "error.log")
            cmd = [NGINX, "-p", self.folder, "-c", os.path.join(self.folder, "nginx.conf"), "-e", err]
            proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.PIPE, user=self.user, group=self.group,
                                    extra_groups=[] if self.user else None)
            end = time.monotonic() + timeout
            while time.monotonic() < end:
                if proc.poll() is not None:
                    last = (proc.stderr.read().decode(errors="replace") + self._error_log()).strip()
                    break
                if accepts(self.port):
                    self.proc = proc
                    proc.stderr.close()
                    if port_file:
                        with open(port_file + ".tmp", "w") as pf:
                            pf.write(f"{self.port}\n")
                        os.replace(port_file + ".tmp", port_file)
                        self.port_file = port_file
                    return self.port
                time.sleep(0.02)
            else:
                self._end(proc)
                raise WebServerError(f"nginx did not accept on 127.0.0.1:{self.port} within {timeout:g} s")
            if "Address already in use" not in last:
                raise WebServerError(f"nginx exited ({proc.returncode}): {last[-600:]}")
        raise WebServerError(f"nginx did not start: {last[-600:]}")

    def _error_log(self):
        try:
            with open(os.path.join(self.folder, "logs", "error.log"), errors="replace") as f:
                return f.read()[-2000:]
        except OSError:
            return ""

    @staticmethod
    def _end(proc, timeout=10):
        """SIGTERM to proc (nginx's fast shutdown), SIGKILL after timeout s; by its PID only."""
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(5)

    def stop(self):
        """Removes the port file (new guest connections are refused from now on), then stops nginx."""
        if self.port_file:
            try:
                os.remove(self.port_file)
            except FileNotFoundError:
                pass
            self.port_file = None
        if self.proc is not None:
            self._end(self.proc)
            self.proc = None

    def running(self):
        return self.proc is not None and self.proc.poll() is None

    def access_log(self, settle=0.3, limit=3.0):
        """The access log's requests, oldest first: dicts with t (Unix time, float), status, bytes
        (body bytes sent), method, path, inm (If-None-Match sent, "-" if none), range. Reads the log
        once it has not grown for `settle` s (at most `limit` s)."""
        path = os.path.join(self.folder, "logs", "access.log")

        def read():
            try:
                with open(path, errors="replace") as f:
                    return f.read()
            except FileNotFoundError:
                return ""
        text, end = read(), time.monotonic() + limit
        while time.monotonic() < end:
            time.sleep(settle)
            again = read()
            if again == text:
                break
            text = again
        out = []
        for line in text.splitlines():
            m = LOG_LINE.match(line)
            if m:
                d = m.groupdict()
                d["t"], d["status"], d["bytes"] = float(d["t"]), int(d["status"]), int(d["bytes"])
                d["inm"] = d["inm"].replace("\\x22", '"')  # nginx escapes the quotes of an ETag
                out.append(d)
        return out

    def error_log(self):
        """The tail of nginx's error log."""
        return self._error_log()

    def close(self):
        """Stops nginx and removes the folder."""
        self.stop()
        shutil.rmtree(self.folder, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
