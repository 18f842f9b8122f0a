import socket, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 18441)); s.listen(64); s.settimeout(0.2)
end = time.time() + 4
n = 0
while time.time() < end:
    try:
        c, _ = s.accept()
    except socket.timeout:
        continue
    n += 1
    if n % 2:
        c.recv(1024); c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
    c.close()
