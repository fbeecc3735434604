"""Time: the periods a question names (written out or read from today), the periods a chunk speaks of, and
questions that ask for the latest of something. Uses only the domain's own values."""
