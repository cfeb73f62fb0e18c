"""Atomic writes: readers see the old file or the new one, never a torn mix; a failed
write names the file and leaves nothing behind."""
import os
import stat

import pytest

from genesis.utils.atomic_file import atomic_writer, describe_write_error, write_atomic


def test_replaces_the_file_whole(tmp_path):
    target = tmp_path / "trace.json"
    write_atomic(target, "old")
    write_atomic(target, "new")
    assert target.read_text() == "new"
    assert sorted(os.listdir(tmp_path)) == ["trace.json"]


def test_an_exception_while_writing_keeps_the_previous_file(tmp_path):
    target = tmp_path / "model.gen"
    write_atomic(target, b"good checkpoint")
    with pytest.raises(RuntimeError):
        with atomic_writer(target) as handle:
            handle.write(b"half of a new")
            raise RuntimeError("interrupted")
    assert target.read_bytes() == b"good checkpoint"
    assert sorted(os.listdir(tmp_path)) == ["model.gen"]  # no temporary file left


def test_a_missing_folder_is_named(tmp_path):
    target = tmp_path / "absent" / "trace.json"
    with pytest.raises(FileNotFoundError) as raised:
        write_atomic(target, "x")
    assert str(target) in str(raised.value)


def test_new_files_get_the_usual_permissions_and_old_ones_keep_theirs(tmp_path):
    fresh = tmp_path / "fresh.txt"
    write_atomic(fresh, "x")
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(fresh.stat().st_mode) == 0o666 & ~umask
    kept = tmp_path / "kept.txt"
    kept.write_text("x")
    kept.chmod(0o640)
    write_atomic(kept, "y")
    assert stat.S_IMODE(kept.stat().st_mode) == 0o640


def test_invalid_unicode_in_text_is_written_not_raised(tmp_path):
    target = tmp_path / "names.txt"
    write_atomic(target, "caf\udcc3\udca9")  # undecodable bytes of a file name, as Python holds them
    assert target.read_bytes() == "café".encode()


def test_the_error_line_names_the_file():
    line = describe_write_error("out/report.html", OSError(30, "Read-only file system"))
    assert line == "can't write out/report.html: Read-only file system (nothing was left half-written)"
