import socket, sys, time
def hmp(path, cmds):
    s = socket.socket(socket.AF_UNIX); s.connect(path); s.settimeout(5)
    def readall():
        buf = b""
        while True:
            try:
                d = s.recv(65536)
            except socket.timeout:
                break
            if not d: break
            buf += d
            if buf.endswith(b"(qemu) "): break
        return buf.decode(errors="replace")
    readall()
    out = []
    for c in cmds:
        s.sendall(c.encode() + b"\n")
        out.append("### " + c + "\n" + readall())
    return "\n".join(out)
print(hmp(sys.argv[1], sys.argv[2:]))
