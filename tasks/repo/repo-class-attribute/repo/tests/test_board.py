import pytest

from kanban import Board, CardNotFound, ColumnNotFound, NothingToUndo, WipLimitExceeded


@pytest.fixture
def board():
    b = Board("web", wip_limits={"doing": 2})
    b.add_card("Login page", points=3, tags=("ui",))
    b.add_card("Password reset", points=2, tags=("ui", "auth"))
    b.add_card("Session store", points=5, tags=("backend",))
    return b


def test_card_ids_are_numbered_per_board(board):
    other = Board("api")
    first = other.add_card("Rate limiting")
    assert first.id == "API-1"
    assert board.snapshot()["todo"] == ["WEB-1", "WEB-2", "WEB-3"]
    assert board.add_card("Logout").id == "WEB-4"


def test_move_and_snapshot(board):
    board.move("web-2", "doing")
    board.move("WEB-1", "doing", position=0)
    assert board.snapshot() == {
        "todo": ["WEB-3"],
        "doing": ["WEB-1", "WEB-2"],
        "review": [],
        "done": [],
    }
    assert board.card("WEB-1").column == "doing"


def test_wip_limit_blocks_move(board):
    board.move("WEB-1", "doing")
    board.move("WEB-2", "doing")
    with pytest.raises(WipLimitExceeded) as excinfo:
        board.move("WEB-3", "doing")
    assert excinfo.value.limit == 2
    assert board.card("WEB-3").column == "todo"


def test_unknown_card_and_column(board):
    with pytest.raises(CardNotFound):
        board.move("WEB-99", "done")
    with pytest.raises(ColumnNotFound):
        board.move("WEB-1", "archive")
    with pytest.raises(ColumnNotFound):
        Board("x", wip_limits={"qa": 1})


def test_undo_move_restores_position(board):
    board.move("WEB-2", "review")
    undone = board.undo()
    assert undone.action == "move"
    assert undone.card_id == "WEB-2"
    assert board.snapshot()["todo"] == ["WEB-1", "WEB-2", "WEB-3"]
    assert board.card("WEB-2").column == "todo"


def test_undo_add_removes_card(board):
    card = board.add_card("Dark mode", column="review")
    board.undo()
    with pytest.raises(CardNotFound):
        board.card(card.id)
    assert board.snapshot()["review"] == []


def test_find_by_tag(board):
    assert [c.id for c in board.find("UI")] == ["WEB-1", "WEB-2"]
    assert [c.id for c in board.find("auth")] == ["WEB-2"]


def test_undo_only_touches_its_own_board(board):
    ops = Board("ops")
    ops.add_card("Rotate keys")
    ops.add_card("Patch kernel")
    ops.move("OPS-1", "doing")
    board.move("WEB-3", "done")
    undone = ops.undo()
    assert undone.card_id == "OPS-1"
    assert ops.snapshot()["todo"] == ["OPS-1", "OPS-2"]
    assert board.card("WEB-3").column == "done"


def test_fresh_board_has_nothing_to_undo(board):
    board.move("WEB-1", "doing")
    fresh = Board("new")
    with pytest.raises(NothingToUndo):
        fresh.undo()
    assert board.card("WEB-1").column == "doing"
