"""Names holding control characters, XML-forbidden code points and lone surrogates (a file
name's undecodable bytes): the viewer page is written, opens in Chromium without an error,
and shows each name (the picture as `printable` writes it)."""
from __future__ import annotations

import genesis
import viz
from genesis import nn
from genesis.debug import record
from genesis.debug.printable import printable
from genesis.debug.trace import Trace

from . import reports

MODULE = "enc\x00\x1b[31m\ufffe\ud800"
PARAMETER = "w\n\t\r\x07\x85\udcff"
SCRIPT = "/tmp/train\udcff\x1b[1m.py"


class Odd(nn.Module):
    def __init__(self):
        super().__init__()
        self.add_module(MODULE, nn.Linear(2, 2))
        self.register_parameter(PARAMETER, nn.Parameter(genesis.ones(2)))

    def forward(self, x):
        return (self._modules[MODULE](x) * self._parameters[PARAMETER]).tanh().sum()


def test_control_characters_and_surrogates_open_in_the_viewer(session, tmp_path):
    with record() as recording:
        Odd()(genesis.randn(3, 2)).backward()
    (graph,) = recording.graphs
    trace = Trace(script=SCRIPT, graphs=[graph], parameters=reports.parameter_rows(graph),
                  steps_recorded=1, steps_seen=1)
    path = tmp_path / "report.html"
    viz.to_html(trace, path)
    page = session.page
    session.open(path)
    assert page.title() == f"genesis trace: {printable(SCRIPT)}"
    drawn = page.text_content("#canvas svg")
    assert printable(MODULE) in drawn  # the module's cluster label
    names = page.locator("#parameters-table .param-name").all_text_contents()
    assert f"{MODULE}.weight".replace("\ud800", "\ufffd") in names
