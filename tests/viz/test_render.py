import doctest
import importlib
import shutil
import xml.etree.ElementTree as ElementTree
from collections import OrderedDict

import pytest

import genesis
import viz
from genesis.debug import capture_graph
from viz import backends
from viz.backends import EMBEDDED, EMBEDDED_MAX_NODES, SYSTEM, RenderError, choose_backend
from viz.dot import to_dot

needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz dot is not installed")


@pytest.fixture
def without_dot(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    assert shutil.which("dot") is None


def svg_texts(path) -> list:
    root = ElementTree.parse(path).getroot()
    return [element.text for element in root.iter() if element.tag.endswith("text")]


@needs_dot
def test_render_svg_with_system_dot(tmp_path):
    x = genesis.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2 + 3
    assert choose_backend("svg") == SYSTEM
    path = viz.render(capture_graph(y), tmp_path / "graph.svg")
    texts = svg_texts(path)
    assert {"AddBackward", "MulBackward", "x", "y", "Legend"} <= set(texts)


@needs_dot
@pytest.mark.parametrize("format, magic", [("png", b"\x89PNG"), ("pdf", b"%PDF")])
def test_render_png_and_pdf_with_system_dot(tmp_path, format, magic):
    x = genesis.randn(2, requires_grad=True)
    path = viz.render(x.exp(), tmp_path / f"graph.{format}")
    assert path.read_bytes().startswith(magic)


def test_without_dot_the_embedded_backend_renders_svg(without_dot, tmp_path):
    x = genesis.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2 + 3
    assert choose_backend("svg") == EMBEDDED
    path = viz.render(y, tmp_path / "graph.svg")  # a tensor: captured first, names from here
    texts = svg_texts(path)
    assert {"AddBackward", "MulBackward", "x", "y"} <= set(texts)


def test_without_dot_png_is_a_clear_error(without_dot, tmp_path):
    x = genesis.randn(2, requires_grad=True)
    with pytest.raises(RenderError, match="needs the Graphviz `dot` program.*format='svg'"):
        viz.render(x.exp(), tmp_path / "graph.png")


def test_embedded_backend_drawings_stay_under_its_limit(without_dot, tmp_path):
    x = genesis.tensor([1.0], requires_grad=True)
    y = x
    for _ in range(3_000):
        y = y * 1.0001
    path = viz.render(y, tmp_path / "chain.svg", max_nodes=None)
    assert any(text == "… 2,998 ops …" for text in svg_texts(path))
    assert any(f"collapsed to fit {EMBEDDED_MAX_NODES:,} nodes" in (text or "") for text in svg_texts(path))


def test_dot_format_needs_no_graphviz(without_dot, tmp_path):
    x = genesis.randn(2, requires_grad=True)
    path = viz.render(x.exp(), tmp_path / "graph.dot")
    assert path.read_text().startswith("digraph genesis {")


def test_render_rejects_other_things(tmp_path):
    with pytest.raises(TypeError, match="Graph or a Tensor"):
        viz.render([1, 2], tmp_path / "x.svg")
    with pytest.raises(ValueError, match="format must be one of"):
        viz.render(genesis.randn(2, requires_grad=True).exp(), tmp_path / "x.svg", format="gif")


def test_graph_shows_inline_in_notebooks():
    x = genesis.randn(2, requires_grad=True)
    svg = capture_graph(x.exp())._repr_svg_()
    root = ElementTree.fromstring(svg)
    assert root.tag.endswith("svg") and "ExpBackward" in svg


def test_embedded_backend_failure_is_a_render_error(without_dot):
    with pytest.raises(RenderError, match="embedded Graphviz"):
        backends.run_graphviz("digraph { a -> }", "svg", EMBEDDED)


@pytest.mark.parametrize("name", ["collapse", "dot", "render", "style", "html_report"])
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(f"viz.{name}"), optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted > 0


# named, as genesis names its drawings (dot numbers anonymous graphs across one run)
SMALL_GRAPHS = ['digraph g { a -> b; subgraph cluster_x { label="x"; c } }', 'digraph h { "<?xml" -> y }',
                'digraph k { p [label="&lt;svg"] }']


@needs_dot
def test_drawings_laid_out_together_are_those_laid_out_alone(monkeypatch):
    monkeypatch.setattr(backends, "BATCHED_SOURCE_CHARS", 1000)
    big = "digraph big {" + " ".join(f"n{i} -> n{i + 1};" for i in range(100)) + "}"
    sources = [*SMALL_GRAPHS, big]
    alone = [backends.run_graphviz(source, "svg", SYSTEM) for source in sources]
    runs = counted_dot_runs(monkeypatch)  # (and the layouts just made forgotten)
    assert backends.run_graphviz_all(sources, "svg", SYSTEM) == alone
    assert len(runs) == 2  # the small ones in one run of dot, the big one in its own


def counted_dot_runs(monkeypatch) -> list:
    """The runs of dot from now on (appended to the list returned), none remembered yet."""
    monkeypatch.setattr(backends, "_RECENT_LAYOUTS", OrderedDict())
    runs = []
    real_run = backends.subprocess.run
    monkeypatch.setattr(backends.subprocess, "run",
                        lambda *args, **kwargs: runs.append(args) or real_run(*args, **kwargs))
    return runs


@needs_dot
def test_a_drawing_asked_for_again_is_laid_out_once(monkeypatch):
    runs = counted_dot_runs(monkeypatch)
    first, second, again = backends.run_graphviz_all(
        [SMALL_GRAPHS[0], SMALL_GRAPHS[1], SMALL_GRAPHS[0]], "svg", SYSTEM)
    assert again == first and len(runs) == 1
    assert backends.run_graphviz(SMALL_GRAPHS[1], "svg", SYSTEM) == second and len(runs) == 1
    assert backends.run_graphviz(SMALL_GRAPHS[2], "svg", SYSTEM).count(b"<svg") == 1
    assert len(runs) == 2


@needs_dot
def test_only_the_last_few_layouts_are_kept(monkeypatch):
    runs = counted_dot_runs(monkeypatch)
    sources = [f"digraph g{index} {{ a -> b{index} }}" for index in
               range(backends.RECENT_LAYOUTS_KEPT + 1)]
    for source in sources:
        backends.run_graphviz(source, "svg", SYSTEM)
    backends.run_graphviz(sources[-1], "svg", SYSTEM)  # kept
    backends.run_graphviz(sources[0], "svg", SYSTEM)  # the oldest, forgotten: laid out again
    assert len(runs) == len(sources) + 1
    assert len(backends._RECENT_LAYOUTS) == backends.RECENT_LAYOUTS_KEPT


@needs_dot
def test_a_drawing_dot_cannot_lay_out_is_named_as_alone():
    with pytest.raises(RenderError, match="dot -Tsvg failed: .*syntax error"):
        backends.run_graphviz_all([*SMALL_GRAPHS, "digraph bad { a -> }"], "svg", SYSTEM)


@needs_dot
def test_with_a_failures_dict_a_drawing_dot_cannot_lay_out_is_none_and_the_others_are_made():
    failures = {}
    made = backends.run_graphviz_all([SMALL_GRAPHS[0], "digraph bad { a -> }", SMALL_GRAPHS[1]],
                                     "svg", SYSTEM, failures=failures)
    assert made[1] is None and made[0].count(b"<svg") == 1 and made[2].count(b"<svg") == 1
    assert list(failures) == [1] and "syntax error" in str(failures[1])


def test_a_view_that_cannot_be_laid_out_is_left_out_of_the_page_with_a_note(monkeypatch):
    """(dot stopped on the all-nodes drawing of a long unrolled RNN: the page kept none.)"""
    from viz import html_views

    model = genesis.nn.Sequential(genesis.nn.Linear(3, 4), genesis.nn.Tanh(), genesis.nn.Linear(4, 1))
    graph = genesis.debug.capture_graph(model(genesis.randn(2, 3)).sum())
    real = html_views.run_graphviz_all

    def all_nodes_fails(sources, format, backend, failures=None):
        made = real(sources, format, backend, failures=failures)
        failures[len(sources) - 1] = RenderError("dot -Tsvg was stopped after 120 s")
        return made[:-1] + [None]
    monkeypatch.setattr(html_views, "run_graphviz_all", all_nodes_fails)
    views = html_views.draw_views(graph)
    assert [(view.label, view.saved) for view in views] == [
        ("modules folded", False), ("all nodes", False), ("modules folded", True)]  # the last: gone
    assert all(view.svg and view.notes[-1] == "not drawn: all nodes with saved tensors: dot -Tsvg "
               "was stopped after 120 s" for view in views)


def test_a_big_drawing_bounds_dots_placement_and_a_small_one_does_not():
    from viz.dot import BOUNDED_FROM_ITEMS

    small = genesis.debug.capture_graph((genesis.ones(2, requires_grad=True) * 2).sum())
    assert "nslimit" not in to_dot(small).source
    x = genesis.ones(2, requires_grad=True)
    wide = genesis.stack([x * float(index) for index in range(BOUNDED_FROM_ITEMS)]).sum()
    assert "nslimit=3" in to_dot(genesis.debug.capture_graph(wide), max_nodes=5000).source


def test_few_items_with_many_long_edges_bound_dots_placement():
    """A log-domain Sinkhorn loop reads its cost matrix in every iteration: under 300 items,
    but thousands of ranks crossed by edges from the top (dot's virtual nodes), which dot
    took over 2 minutes to place without a bound."""
    from viz.dot import BOUNDED_FROM_ITEMS, placed_nodes
    from viz.collapse import build_view

    cost = (genesis.rand(4, 5, dtype=genesis.float64, requires_grad=True) * 3.0).exp()
    f = genesis.zeros(4, dtype=genesis.float64)
    for _ in range(60):
        f = (f[:, None] - cost).logsumexp(1) * 0.5
    graph = genesis.debug.capture_graph(f.sum())
    view = build_view(graph)
    assert len(view.items) < BOUNDED_FROM_ITEMS and placed_nodes(view) > 2000
    assert "nslimit=3" in to_dot(graph).source
    chain = genesis.ones(2, requires_grad=True)
    for _ in range(100):
        chain = chain * 2.0
    assert "nslimit" not in to_dot(genesis.debug.capture_graph(chain.sum())).source
