"""What the index stores and how a pass plans: point ids and payloads, what is embedded and keyword-encoded
for a chunk, what a pass has to do, the dense pass's order, whether an index adds up, a served model's
instructions. Uses notes, text, periods."""
