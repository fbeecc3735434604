"""plan_changes: what a pass has to do, from the index's records and what the disk shows (no disk here)."""

from __future__ import annotations

from typing import Any

import pytest

from backend.domain.index.change_plan import ChangePlan, KnownNote, Move, ObservedFile, plan_changes

A = KnownNote("hash-a", mtime=100.0, size=10)
B = KnownNote("hash-b", mtime=200.0, size=20)
SAME_A = ObservedFile(mtime=100.0, size=10)
SAME_B = ObservedFile(mtime=200.0, size=20)


def case(
    name: str,
    known: dict[str, KnownNote],
    observed: dict[str, ObservedFile],
    expected: ChangePlan,
    scope: set[str] | None = None,
) -> Any:  # pytest's ParameterSet, which it does not export
    """A row of the table: its name first, the watcher's scope only where a row has one."""
    return pytest.param(known, observed, scope, expected, id=name)


# fmt: off
CASES = [
    # name, the index's records, what the disk shows, the plan (, the paths a watcher event names)
    case("empty-vault", {}, {}, ChangePlan()),
    case("first-pass-all-new", {}, {"a.md": ObservedFile(1.0, 5)}, ChangePlan(new=("a.md",))),
    case("same-size-and-mtime-is-unchanged-unread",
         {"a.md": A, "b.md": B}, {"a.md": SAME_A, "b.md": SAME_B}, ChangePlan(unchanged=("a.md", "b.md"))),
    case("new-mtime-unread-is-changed",
         {"a.md": A}, {"a.md": ObservedFile(101.0, 10)}, ChangePlan(changed=("a.md",))),
    case("new-size-is-changed",
         {"a.md": A}, {"a.md": ObservedFile(100.0, 11)}, ChangePlan(changed=("a.md",))),
    case("touched-but-same-content-is-unchanged",
         {"a.md": A}, {"a.md": ObservedFile(150.0, 10, "hash-a")}, ChangePlan(unchanged=("a.md",))),
    case("read-and-edited-is-changed",
         {"a.md": A}, {"a.md": ObservedFile(150.0, 10, "hash-edited")}, ChangePlan(changed=("a.md",))),
    case("deleted-is-gone",
         {"a.md": A, "b.md": B}, {"a.md": SAME_A}, ChangePlan(gone=("b.md",), unchanged=("a.md",))),
    case("same-content-under-a-new-path-is-a-move",
         {"a.md": A}, {"x/a.md": ObservedFile(300.0, 10, "hash-a")},
         ChangePlan(moved=(Move("a.md", "x/a.md"),))),
    case("unread-new-file-is-no-move",
         {"a.md": A}, {"x/a.md": ObservedFile(300.0, 10)}, ChangePlan(new=("x/a.md",), gone=("a.md",))),
    case("a-copy-is-new-when-the-original-stays",
         {"a.md": A}, {"a.md": SAME_A, "copy.md": ObservedFile(300.0, 10, "hash-a")},
         ChangePlan(new=("copy.md",), unchanged=("a.md",))),
    case("twins-pair-one-to-one-by-path",
         {"a.md": A, "a2.md": KnownNote("hash-a", 1.0, 10)},
         {"n1.md": ObservedFile(3.0, 10, "hash-a"), "n2.md": ObservedFile(4.0, 10, "hash-a"),
          "n3.md": ObservedFile(5.0, 10, "hash-a")},
         ChangePlan(new=("n3.md",), moved=(Move("a.md", "n1.md"), Move("a2.md", "n2.md")))),
    case("a-watcher-event-leaves-notes-outside-its-scope-alone",
         {"a.md": A, "b.md": B}, {"c.md": ObservedFile(1.0, 1)}, ChangePlan(new=("c.md",)), scope={"c.md"}),
    case("a-rename-event-is-a-move",
         {"a.md": A, "b.md": B}, {"x/b.md": ObservedFile(9.0, 20, "hash-b")},
         ChangePlan(moved=(Move("b.md", "x/b.md"),)), scope={"b.md", "x/b.md"}),
    case("observed-paths-count-even-outside-the-scope",
         {"a.md": A, "b.md": B}, {"b.md": SAME_B},
         ChangePlan(gone=("a.md",), unchanged=("b.md",)), scope={"a.md"}),
]
# fmt: on


@pytest.mark.parametrize(("known", "observed", "scope", "expected"), CASES)
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
