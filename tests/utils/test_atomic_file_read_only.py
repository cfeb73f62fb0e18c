"""An atomic write never replaces a read-only file: the rename it ends with would succeed
(it needs only the folder to be writable), so the writer checks the file's mode bits first.
The check reads the mode, not os.access, so it holds for root too (these tests run as root)."""
import os
import stat

import pytest

from genesis.utils.atomic_file import (atomic_writer, describe_write_error, is_read_only,
                                       write_atomic, write_atomic_with)


def read_only_file(path, content: bytes = b"old"):
    path.write_bytes(content)
    path.chmod(0o444)
    return path


@pytest.mark.parametrize("write", [
    lambda path: write_atomic(path, "new"),
    lambda path: atomic_writer(path).__enter__(),
    lambda path: write_atomic_with(path, lambda temporary: open(temporary, "w").close()),
], ids=["write_atomic", "atomic_writer", "write_atomic_with"])
def test_a_read_only_file_is_refused_and_left_untouched(tmp_path, write):
    target = read_only_file(tmp_path / "trace.json")
    with pytest.raises(PermissionError) as raised:
        write(target)
    assert raised.value.filename == str(target) and "read-only" in str(raised.value)
    assert "chmod u+w" in str(raised.value)
    assert target.read_bytes() == b"old" and stat.S_IMODE(target.stat().st_mode) == 0o444
    assert os.listdir(tmp_path) == ["trace.json"]  # no temporary file left


def test_the_error_line_names_the_read_only_file_and_the_fix(tmp_path):
    target = read_only_file(tmp_path / "report.html")
    with pytest.raises(PermissionError) as raised:
        write_atomic(target, "new")
    assert describe_write_error(target, raised.value) == (
        f"can't write {target}: the file is read-only; chmod u+w it, or write elsewhere "
        "(nothing was left half-written)")


def test_any_write_bit_makes_a_file_writable_and_folders_and_missing_paths_are_not_read_only(tmp_path):
    owner_only = tmp_path / "mine.txt"
    owner_only.write_text("old")
    owner_only.chmod(0o644)
    write_atomic(owner_only, "new")
    assert owner_only.read_text() == "new"
    group_only = tmp_path / "group.txt"
    group_only.write_text("old")
    group_only.chmod(0o464)
    assert not is_read_only(group_only)
    assert not is_read_only(tmp_path / "absent.txt")
    assert not is_read_only(tmp_path)


def test_write_atomic_with_keeps_the_old_files_permissions(tmp_path):
    target = tmp_path / "graph.svg"
    target.write_text("old")
    target.chmod(0o640)
    write_atomic_with(target, lambda temporary: open(temporary, "w").write("new"))
    assert target.read_text() == "new" and stat.S_IMODE(target.stat().st_mode) == 0o640
    assert os.listdir(tmp_path) == ["graph.svg"]
