"""pallas-diff mutant worker: the worker script a mutant's Helion pool starts.

It does not import Helion: it hands its stdin, stdout and stderr to the fork server
(mutant_zygote.py), whose child becomes the Helion worker (helion_worker.py's protocol) with
the mutant applied, and waits until that child exits. Killing this process (the pool's
timeout) makes the child exit too: it watches the connection.

The mutant is the overlay directory first on PYTHONPATH (the pool puts a Helion build's
overlay there): its `mutant.json` names the fork server's socket, the modules the mutant
replaces with their files, and whether coverage is measured (mutant_zygote.py documents the
fields).
"""

import json
import os
import socket
import sys

ENV_KEYS = ("PALLAS_DIFF_WORK_DIR", "XLA_FLAGS", "PALLAS_DIFF_TPU_KIND", "PYTHONUNBUFFERED")


def fail(kind, message):
    line = {"v": 1, "id": 0, "ok": False, "error": {"stage": "import", "type": kind, "message": message, "traceback": ""}}
    sys.stdout.write(json.dumps(line) + "\n")
    sys.stdout.flush()
    sys.exit(3)


def main():
    entries = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    manifest_path = os.path.join(entries[0], "mutant.json") if entries else None
    if manifest_path is None or not os.path.isfile(manifest_path):
        fail("NoMutant", "the first PYTHONPATH entry holds no mutant.json: %r" % (entries[:1],))
    with open(manifest_path, encoding="utf-8") as f:
        manifest = json.load(f)
    msg = {
        "modules": manifest.get("modules", {}),
        "coverage": manifest.get("coverage"),
        "env": {k: os.environ[k] for k in ENV_KEYS if k in os.environ},
        "launcher": os.getpid(),
    }
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect(manifest["zygote"])
        socket.send_fds(s, [json.dumps(msg).encode("utf-8")], [0, 1, 2])
    except OSError as e:
        fail("ForkServerUnreachable", "%s: %s" % (manifest.get("zygote"), e))
    # The child sends nothing: recv returns b"" when it exits.
    try:
        while s.recv(1):
            pass
    except OSError:
        pass
    os._exit(0)


if __name__ == "__main__":
    main()
