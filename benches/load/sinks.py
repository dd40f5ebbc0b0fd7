"""Receivers for the notification benchmarks: an SMTP server that accepts every message and an
HTTP server that answers every webhook with 204, both on loopback.

Each webhook is logged as `<arrival epoch ms> <webhook-id>` to the log file given; the counts
of both are written to `<log>.counts` when the process gets SIGTERM.

Usage: python3 sinks.py SMTP_PORT HTTP_PORT LOG
"""

import asyncio
import signal
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

smtp_port, http_port, log_path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
counts = {"mail": 0, "webhook": 0}
log = open(log_path, "a", buffering=1)
lock = threading.Lock()


async def smtp_session(reader, writer):
    """Just enough SMTP (RFC 5321) for one client: every command is accepted."""
    writer.write(b"220 sink ESMTP\r\n")
    await writer.drain()
    in_data = False
    while True:
        line = await reader.readline()
        if not line:
            break
        if in_data:
            if line == b".\r\n":
                in_data = False
                counts["mail"] += 1
                writer.write(b"250 2.0.0 queued\r\n")
                await writer.drain()
            continue
        verb = line[:4].upper()
        if verb == b"EHLO":
            writer.write(b"250-sink\r\n250 8BITMIME\r\n")
        elif verb == b"DATA":
            in_data = True
            writer.write(b"354 go ahead\r\n")
        elif verb == b"QUIT":
            writer.write(b"221 bye\r\n")
            await writer.drain()
            break
        else:
            writer.write(b"250 ok\r\n")
        await writer.drain()
    writer.close()


class Hook(BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        arrived = time.time() * 1000
        with lock:
            counts["webhook"] += 1
            log.write(f"{arrived:.3f} {self.headers.get('webhook-id')}\n")
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args):
        pass


def finish(*_):
    try:
        with open(log_path + ".counts", "w") as f:
            f.write(f"{counts['mail']} {counts['webhook']}\n")
    except OSError:
        pass  # the benchmark is gone already and wants no counts
    sys.exit(0)


signal.signal(signal.SIGTERM, finish)
http = ThreadingHTTPServer(("127.0.0.1", http_port), Hook)
threading.Thread(target=http.serve_forever, daemon=True).start()


async def main():
    server = await asyncio.start_server(smtp_session, "127.0.0.1", smtp_port)
    async with server:
        await server.serve_forever()


asyncio.run(main())
