"""`python -m backend`: the parser and the serve/eval commands (`main`), the commands that read or change the
index (`commands`, over the running service or in-process: `target`), what they print (`output`) and the
operator commands (`admin`)."""
