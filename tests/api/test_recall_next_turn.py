"""The next turn of a conversation: what the agent was given in the turns before (the OpenClaw plugin's
`exclude`) is not quoted again, but the chunk after it is, though the chunker's overlap shares a line of the
two. Through the HTTP API on real files, by keyword alone and with the default model (slow)."""

from __future__ import annotations

from fastapi.testclient import TestClient

from tests.api.conftest import recall_block, vault_client

PATH = "Home/Renovation.md"
PARAGRAPHS = [
    "Kitchen first: the tiler laid the metro tiles in a herringbone above the hob, grout in charcoal, two "
    "days late because the adhesive ran out on the Tuesday afternoon and the merchant was closed.",
    "The electrician moved the sockets for the new worktop and added a spur for the extractor, then found "
    "the old ring main was never earthed properly and rewired the whole downstairs circuit.",
    "Flooring: oak engineered boards in the hall and the dining room, the cupboard under the stairs left "
    "bare because nobody will see it and the boards cost more than expected per square metre.",
    "The skip sat on the drive for three weeks, the neighbours were patient, the council permit renewed "
    "once, and the last load was mostly the old kitchen units and the broken bathroom sink.",
    "Windows: the fitter replaced the two at the back with double glazing, kept the sash at the front for "
    "the conservation area rules, and repainted the frames the same heritage green as before.",
    "Garden wall repointed with lime mortar after the surveyor warned that cement would trap damp in the "
    "old brick, which is what had cracked the render along the side passage in the first place.",
    "The plasterer Dmitri quoted £1,850 for skimming the back bedroom ceiling and the landing walls, "
    "starting the second week of March once the new joists have settled.",
]
FILES = {PATH: "# Renovation log\n\n" + "\n\n".join(PARAGRAPHS) + "\n"}
QUESTION = "how much did Dmitri quote for the back bedroom ceiling"

client = vault_client(FILES)


def _chunks(client: TestClient) -> list[tuple[int, int]]:
    response = client.get(f"/note/{PATH}/chunks")
    assert response.status_code == 200, response.text
    return [(chunk["start_line"], chunk["end_line"]) for chunk in response.json()["chunks"]]


def test_the_chunk_after_one_given_is_quoted_and_the_one_given_is_not_again(client: TestClient) -> None:
    first, second = _chunks(client)
    assert first[1] == second[0]  # the chunker's overlap: the second starts on the first's last line
    given = f"{PATH}:{first[0]}-{first[1]}"

    answer = recall_block(client, QUESTION, exclude=[given])

    (source,) = answer["sources"]
    assert source["note_path"] == PATH
    assert source["start_line"] >= second[0]
    assert "£1,850" in answer["context"]

    # a turn later, what that turn gave is not quoted again
    again = recall_block(client, QUESTION, exclude=[given, source["attribution"]], explain=True)
    assert again["sources"] == []
    assert {c["reason"] for c in again["explain"]["considered"]} == {"repeated"}
