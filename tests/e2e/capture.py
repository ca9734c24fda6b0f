"""A hook command that keeps what the client sent: `capture.py DIR CMD...`
writes its stdin to DIR/NNN-EVENT.json, runs CMD with the same stdin and
passes on CMD's stdout and exit status (what the client reads)."""

import json
import os
import subprocess
import sys

out, cmd = sys.argv[1], sys.argv[2:]
body = sys.stdin.buffer.read()
try:
    event = str(json.loads(body).get("hook_event_name", "unknown"))
except (ValueError, AttributeError):
    event = "unparsed"
os.makedirs(out, exist_ok=True)
n = len(os.listdir(out))
with open(os.path.join(out, f"{n:03d}-{''.join(c for c in event if c.isalnum())}.json"), "wb") as f:
    f.write(body)
done = subprocess.run(cmd, input=body, stdout=subprocess.PIPE)
sys.stdout.buffer.write(done.stdout)
sys.exit(done.returncode)
