from kanban import Board


def test_activity_is_recorded_in_order():
    Board("blog").add_card("Release notes")
    board = Board("docs")
    board.add_card("Install guide")
    board.add_card("FAQ")
    board.move("DOCS-2", "doing")
    history = board.activity()
    assert [(e.seq, e.action, e.card_id) for e in history] == [
        (1, "add", "DOCS-1"),
        (2, "add", "DOCS-2"),
        (3, "move", "DOCS-2"),
    ]
    assert history[2].detail("dst") == "doing"


def test_each_board_keeps_its_own_history():
    web = Board("web")
    web.add_card("Landing page")
    api = Board("api")
    api.add_card("Auth endpoint")
    api.move("API-1", "review")
    assert [e.card_id for e in web.activity()] == ["WEB-1"]
    assert [e.describe() for e in api.activity(card_id="API-1")] == [
        "#1 add API-1 (column=todo)",
        "#2 move API-1 (dst=review, pos=0, src=todo)",
    ]
