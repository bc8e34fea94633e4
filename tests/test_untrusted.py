"""imsdr.untrusted: the one way to read a file imsdr did not write."""

from __future__ import annotations

import os
import socket
import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from imsdr.untrusted import UntrustedFile, open_directory, read_untrusted, read_untrusted_text


def test_regular_file_is_read(tmp_path):
    f = tmp_path / "a.txt"
    f.write_bytes(b"hello\n")
    assert read_untrusted(f, 100) == b"hello\n"
    assert read_untrusted_text(f, 6) == "hello\n"


def test_symlink_is_refused_not_followed(tmp_path):
    secret = tmp_path / "secret"
    secret.write_text("TOKEN=abc")
    link = tmp_path / "README.md"
    link.symlink_to("/proc/self/environ")
    with pytest.raises(UntrustedFile, match="symbolic link") as info:
        read_untrusted(link, 1 << 20)
    assert "TOKEN" not in str(info.value)
    (tmp_path / "l2").symlink_to(secret)
    with pytest.raises(UntrustedFile, match="symbolic link"):
        read_untrusted(tmp_path / "l2", 100)


def test_fifo_does_not_hang(tmp_path):
    fifo = tmp_path / "named.conf"
    os.mkfifo(fifo)
    with pytest.raises(UntrustedFile, match="a FIFO, not a regular file"):
        read_untrusted(fifo, 100)


def test_devices_sockets_and_directories_are_refused(tmp_path):
    with pytest.raises(UntrustedFile, match="a device"):
        read_untrusted("/dev/zero", 100)
    with pytest.raises(UntrustedFile, match="directory"):
        read_untrusted(tmp_path, 100)
    sock_path = tmp_path / "s"
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.bind(str(sock_path))
        with pytest.raises(UntrustedFile, match="socket|cannot open"):
            read_untrusted(sock_path, 100)
    finally:
        sock.close()


def test_missing_file_and_located_refusal(tmp_path):
    with pytest.raises(UntrustedFile, match=r"^named.conf:12: .*/nope: no such file$"):
        read_untrusted(tmp_path / "nope", 100, named_at="named.conf:12")


@settings(max_examples=40, deadline=None)
@given(size=st.integers(min_value=0, max_value=300), limit=st.integers(min_value=0, max_value=300))
def test_limit_is_exact(tmp_path_factory, size, limit):
    f = tmp_path_factory.mktemp("lim") / "f"
    f.write_bytes(b"x" * size)
    if size <= limit:
        assert read_untrusted(f, limit) == b"x" * size
    else:
        with pytest.raises(UntrustedFile, match="bytes; at most"):
            read_untrusted(f, limit)


def test_dir_fd_confines_to_the_directory(tmp_path):
    (tmp_path / "inside").write_text("ok")
    (tmp_path / "out").symlink_to("/etc/passwd")
    fd = open_directory(tmp_path)
    try:
        assert read_untrusted("inside", 10, dir_fd=fd) == b"ok"
        with pytest.raises(UntrustedFile, match="symbolic link"):
            read_untrusted("out", 10_000, dir_fd=fd)
    finally:
        os.close(fd)
    link_dir = tmp_path / "linked"
    link_dir.symlink_to(tmp_path)
    with pytest.raises(UntrustedFile, match="not a directory"):
        open_directory(link_dir)


def test_not_utf8_is_located(tmp_path):
    f = tmp_path / "keys.conf"
    f.write_bytes(b"key x {\n  al\xffgorithm\n")
    with pytest.raises(UntrustedFile, match=r"keys.conf:2:5: not UTF-8 text \(byte 0xff\)"):
        read_untrusted_text(f, 100)


def test_fifo_with_a_writer_is_still_refused(tmp_path):
    fifo = tmp_path / "zone"
    os.mkfifo(fifo)
    stop = threading.Event()

    def writer():
        try:
            fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        except OSError:
            return
        stop.wait(2)
        os.close(fd)

    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # lets the writer open
    thread = threading.Thread(target=writer)
    thread.start()
    try:
        with pytest.raises(UntrustedFile, match="FIFO"):
            read_untrusted(fifo, 100)
    finally:
        stop.set()
        thread.join()
        os.close(reader)
