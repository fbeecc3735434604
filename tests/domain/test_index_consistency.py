from backend.domain.index.ids import chunk_point_id
from backend.domain.index.index_consistency import RecordedNote, store_drift
from backend.domain.models import ChunkEntry


def entry(
    path: str, index: int, content: str = "h", *, dense: bool = True, point_id: str | None = None
) -> ChunkEntry:
    return ChunkEntry(point_id or chunk_point_id(path, index), path, index, content, dense)


RECORDS = {"a.md": RecordedNote("h", True), "b.md": RecordedNote("h", False)}


def test_points_that_add_up_with_their_records_are_clean() -> None:
    drift = store_drift([entry("a.md", 0), entry("a.md", 1), entry("b.md", 0, dense=False)], RECORDS)
    assert drift.clean
    assert drift.damaged_notes == []
    assert drift.summary() == "consistent"


def test_links_that_do_not_add_up_with_the_record_are_drift_when_counted() -> None:
    records = {
        "a.md": RecordedNote("h", True, 2),
        "b.md": RecordedNote("h", True, 0),
        "old.md": RecordedNote("h", True),
    }
    entries = [entry("a.md", 0), entry("b.md", 0), entry("old.md", 0)]
    assert store_drift(entries, records).clean  # links not read: nothing said about them
    assert store_drift(entries, records, {"a.md": 2, "old.md": 5}).clean  # old.md never recorded a count
    lost = store_drift(entries, records, {"a.md": 1})
    assert lost.links_mismatch == ("a.md",)
    assert lost.damaged_notes == ["a.md"]


def test_every_kind_of_drift_names_its_notes() -> None:
    records = {
        **RECORDS,
        "gap.md": RecordedNote("h", True),
        "old.md": RecordedNote("new", True),
        "empty.md": RecordedNote("h", True),
        "foreign.md": RecordedNote("h", True),
    }
    drift = store_drift(
        [
            entry("a.md", 0, dense=False),  # recorded as embedded
            entry("b.md", 0, dense=False),  # recorded as waiting for dense vectors: fine
            entry("gap.md", 0),
            entry("gap.md", 2),
            entry("old.md", 0, "old"),
            entry("foreign.md", 0, point_id="00000000-0000-0000-0000-000000000001"),
            entry("ghost.md", 0),
            entry("ghost.md", 1),
        ],
        records,
    )
    assert drift.orphan_chunks == {"ghost.md": 2}
    assert drift.notes_without_chunks == ("empty.md",)
    assert drift.incomplete_notes == ("gap.md", "old.md")
    assert drift.duplicate_chunks == ("foreign.md",)
    assert drift.dense_missing == ("a.md",)
    assert drift.damaged_notes == ["a.md", "empty.md", "foreign.md", "gap.md", "old.md"]
    assert not drift.clean
    assert drift.summary().startswith("2 chunk points without a note record, 1 notes without chunk points")


def test_a_note_recorded_without_chunks_needs_none_and_a_count_shows_lost_last_chunks() -> None:
    records = {
        "empty.md": RecordedNote("h", True, 0, chunk_count=0),
        "two.md": RecordedNote("h", True, 0, chunk_count=2),
        "old.md": RecordedNote("h", True),  # from before chunks were counted: every note had one
        "gone.md": RecordedNote("h", True),
    }
    drift = store_drift([entry("two.md", 0), entry("old.md", 0)], records)

    assert drift.notes_without_chunks == ("gone.md",)
    assert drift.incomplete_notes == (
        "two.md",
    )  # its last chunk is lost, which indexes 0..n alone cannot show
