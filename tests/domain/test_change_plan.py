"""plan_changes: what a pass has to do, from the index's records and what the disk shows (no disk here)."""

from __future__ import annotations

import pytest

from backend.domain.change_plan import ChangePlan, KnownNote, Move, ObservedFile, plan_changes

A = KnownNote("hash-a", mtime=100.0, size=10)
B = KnownNote("hash-b", mtime=200.0, size=20)
SAME_A = ObservedFile(mtime=100.0, size=10)
SAME_B = ObservedFile(mtime=200.0, size=20)


@pytest.mark.parametrize(
    ("known", "observed", "scope", "expected"),
    [
        pytest.param({}, {}, None, ChangePlan(), id="empty-vault"),
        pytest.param(
            {}, {"a.md": ObservedFile(1.0, 5)}, None, ChangePlan(new=("a.md",)), id="first-pass-all-new"
        ),
        pytest.param(
            {"a.md": A, "b.md": B},
            {"a.md": SAME_A, "b.md": SAME_B},
            None,
            ChangePlan(unchanged=("a.md", "b.md")),
            id="same-size-and-mtime-is-unchanged-unread",
        ),
        pytest.param(
            {"a.md": A},
            {"a.md": ObservedFile(101.0, 10)},
            None,
            ChangePlan(changed=("a.md",)),
            id="new-mtime-unread-is-changed",
        ),
        pytest.param(
            {"a.md": A},
            {"a.md": ObservedFile(100.0, 11)},
            None,
            ChangePlan(changed=("a.md",)),
            id="new-size-is-changed",
        ),
        pytest.param(
            {"a.md": A},
            {"a.md": ObservedFile(150.0, 10, "hash-a")},
            None,
            ChangePlan(unchanged=("a.md",)),
            id="touched-but-same-content-is-unchanged",
        ),
        pytest.param(
            {"a.md": A},
            {"a.md": ObservedFile(150.0, 10, "hash-edited")},
            None,
            ChangePlan(changed=("a.md",)),
            id="read-and-edited-is-changed",
        ),
        pytest.param(
            {"a.md": A, "b.md": B}, {"a.md": SAME_A}, None, ChangePlan(gone=("b.md",), unchanged=("a.md",)),
            id="deleted-is-gone",
        ),
        pytest.param(
            {"a.md": A},
            {"x/a.md": ObservedFile(300.0, 10, "hash-a")},
            None,
            ChangePlan(moved=(Move("a.md", "x/a.md"),)),
            id="same-content-under-a-new-path-is-a-move",
        ),
        pytest.param(
            {"a.md": A},
            {"x/a.md": ObservedFile(300.0, 10)},
            None,
            ChangePlan(new=("x/a.md",), gone=("a.md",)),
            id="unread-new-file-is-no-move",
        ),
        pytest.param(
            {"a.md": A},
            {"a.md": SAME_A, "copy.md": ObservedFile(300.0, 10, "hash-a")},
            None,
            ChangePlan(new=("copy.md",), unchanged=("a.md",)),
            id="a-copy-is-new-when-the-original-stays",
        ),
        pytest.param(
            {"a.md": A, "a2.md": KnownNote("hash-a", 1.0, 10)},
            {"n1.md": ObservedFile(3.0, 10, "hash-a"), "n2.md": ObservedFile(4.0, 10, "hash-a"),
             "n3.md": ObservedFile(5.0, 10, "hash-a")},
            None,
            ChangePlan(new=("n3.md",), moved=(Move("a.md", "n1.md"), Move("a2.md", "n2.md"))),
            id="twins-pair-one-to-one-by-path",
        ),
        pytest.param(
            {"a.md": A, "b.md": B},
            {"c.md": ObservedFile(1.0, 1)},
            {"c.md"},
            ChangePlan(new=("c.md",)),
            id="a-watcher-event-leaves-notes-outside-its-scope-alone",
        ),
        pytest.param(
            {"a.md": A, "b.md": B},
            {"x/b.md": ObservedFile(9.0, 20, "hash-b")},
            {"b.md", "x/b.md"},
            ChangePlan(moved=(Move("b.md", "x/b.md"),)),
            id="a-rename-event-is-a-move",
        ),
        pytest.param(
            {"a.md": A, "b.md": B},
            {"b.md": SAME_B},
            {"a.md"},
            ChangePlan(gone=("a.md",), unchanged=("b.md",)),
            id="observed-paths-count-even-outside-the-scope",
        ),
    ],
)  # fmt: skip
def test_plan(
    known: dict[str, KnownNote],
    observed: dict[str, ObservedFile],
    scope: set[str] | None,
    expected: ChangePlan,
) -> None:
    assert plan_changes(known, observed, scope) == expected


def test_every_path_stands_in_one_group_and_to_write_lists_what_needs_reading() -> None:
    known = {
        "keep.md": A,
        "edit.md": B,
        "drop.md": KnownNote("h-drop", 1.0, 1),
        "old.md": KnownNote("h-mv", 2, 2),
    }
    observed = {
        "keep.md": SAME_A,
        "edit.md": ObservedFile(999.0, 20),
        "new.md": ObservedFile(3.0, 3, "h-new"),
        "moved.md": ObservedFile(4.0, 2, "h-mv"),
    }
    plan = plan_changes(known, observed)
    groups = [
        plan.new,
        plan.changed,
        plan.gone,
        plan.unchanged,
        tuple(p for m in plan.moved for p in (m.old, m.new)),
    ]
    everything = [path for group in groups for path in group]
    assert sorted(everything) == sorted(known.keys() | observed.keys())
    assert plan.to_write == ("edit.md", "moved.md", "new.md")
