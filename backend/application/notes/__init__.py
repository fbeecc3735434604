"""Reading notes for an agent or a person: one note or some of its lines, listings, a note as the index holds
it, and remembered facts. Uses serving and the domain."""
