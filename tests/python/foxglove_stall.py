"""A Foxglove WebSocket client that subscribes to every channel and then reads nothing, with
a receive buffer of a few kilobytes so that the server's queue for it fills within a second
(used by tests/python/test_foxglove.py and benches/streams.py)."""
import base64
import json
import os
import socket


def stalled_client(port, recv_buffer=4096):
    """A WebSocket client that subscribes to every channel and then reads nothing: the
    handshake and frames are written out here so that its receive buffer can be tiny."""
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, recv_buffer)
    s.connect(("127.0.0.1", port))
    key = base64.b64encode(os.urandom(16)).decode()
    s.sendall((f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
               f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
               "Sec-WebSocket-Protocol: foxglove.sdk.v1\r\n\r\n").encode())
    buffer = b""
    while b"\r\n\r\n" not in buffer:
        buffer += s.recv(4096)
    head, buffer = buffer.split(b"\r\n\r\n", 1)
    assert b" 101 " in head.split(b"\r\n")[0], head

    def frame():
        nonlocal buffer
        while True:
            if len(buffer) >= 2:
                length, at = buffer[1] & 0x7F, 2
                if length == 126 and len(buffer) >= 4:
                    length, at = int.from_bytes(buffer[2:4], "big"), 4
                elif length == 127 and len(buffer) >= 10:
                    length, at = int.from_bytes(buffer[2:10], "big"), 10
                if length < 126 or at > 2:
                    if len(buffer) >= at + length:
                        opcode, payload = buffer[0] & 0x0F, buffer[at:at + length]
                        buffer = buffer[at + length:]
                        return opcode, payload
            buffer += s.recv(65536)

    channels = []
    while not channels:
        opcode, payload = frame()
        if opcode == 1:
            message = json.loads(payload)
            if message.get("op") == "advertise":
                channels = [c["id"] for c in message["channels"]]
    text = json.dumps({"op": "subscribe",
                       "subscriptions": [{"id": i, "channelId": c} for i, c in enumerate(channels)]})
    data, mask = text.encode(), os.urandom(4)
    header = bytes([0x81]) + (bytes([0x80 | 126]) + len(data).to_bytes(2, "big")
                              if len(data) >= 126 else bytes([0x80 | len(data)]))
    s.sendall(header + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(data)))
    return s
