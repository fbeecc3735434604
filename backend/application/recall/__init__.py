"""What reaches an agent's prompt: the /context block packed from a search's hits (one vault or several), its
entries and what became of each candidate, and the memory suggestion. Uses search, notes and the domain."""
