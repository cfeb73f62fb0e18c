"""SourceLocation.capture: the user's file, line and function of a call, shared by the calls
of one line, right for code made and dropped at run time."""
from genesis.autograd.source import SourceLocation


def _here():
    return SourceLocation.capture(max_frames=1, skip=2)  # its caller's line


def test_the_calls_of_one_line_share_one_location_and_lines_differ():
    first, second = _here(), _here()
    third = _here()
    assert first is second
    assert third is not first and third.line == first.line + 1
    assert first.file == __file__ and first.function == "test_the_calls_of_one_line_share_one_location_and_lines_differ"


def test_a_loop_at_the_module_level_of_a_long_script_is_located():
    helpers = "\n".join(f"def helper_{index}(a):\n    return a * {index}\n" for index in range(300))
    script = helpers + "\nfound = []\nfor _ in range(3):\n    found.append(capture())\n"
    namespace = {"capture": lambda: SourceLocation.capture(max_frames=1, skip=2)}
    exec(compile(script, "long_script.py", "exec"), namespace)
    found = namespace["found"]
    assert found[0] is found[1] is found[2]
    assert (found[0].file, found[0].line, found[0].function) == ("long_script.py", len(helpers.splitlines()) + 4, "<module>")


def test_code_made_and_dropped_at_run_time_is_never_mistaken_for_other_code():
    # Each round compiles a new function in a file of its own and drops it: a location
    # filed for a dropped code object must never be returned for a later one.
    for round_number in range(200):
        namespace = {"capture": lambda: SourceLocation.capture(max_frames=1, skip=2)}
        padding = "\n" * (round_number % 7)
        exec(compile(f"{padding}def made():\n    return capture()\n", f"made_{round_number}.py",
                     "exec"), namespace)
        location = namespace["made"]()
        assert (location.file, location.line) == (f"made_{round_number}.py", round_number % 7 + 2)
        namespace.clear()  # (the function and its globals: no cycle left for the collector)
        del namespace, location
