from kanban import Board
from kanban.cards import Card, parse_tags
from kanban.metrics import bottleneck, flow_counts, points_by_column, throughput


def make_board(key):
    board = Board(key)
    board.add_card("A", points=3)
    board.add_card("B", points=5)
    board.add_card("C", points=1)
    return board


def test_points_by_column():
    board = make_board("m")
    board.move("M-2", "doing")
    assert points_by_column(board) == {"todo": 4, "doing": 5, "review": 0, "done": 0}


def test_bottleneck():
    board = make_board("m")
    assert bottleneck(board) == "todo"
    board.move("M-2", "review")
    assert bottleneck(board) == "review"
    for cid in ("M-1", "M-2", "M-3"):
        board.move(cid, "done")
    assert bottleneck(board) is None


def test_card_validation_and_tags():
    card = Card("X-1", "Title", 2, frozenset({" UI ", "api"}))
    assert card.tags == frozenset({"ui", "api"})
    assert card.has_tag("Ui")
    assert parse_tags("ui, Backend ,,ui") == frozenset({"ui", "backend"})


def test_flow_counts_and_throughput_per_board():
    alpha = make_board("alpha")
    alpha.move("ALPHA-1", "doing")
    alpha.move("ALPHA-1", "done")
    beta = make_board("beta")
    beta.move("BETA-3", "done")
    assert throughput(beta) == 1
    assert flow_counts(beta) == {"todo": 3, "doing": 0, "review": 0, "done": 1}
