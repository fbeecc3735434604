"""The ways into the program: the HTTP app (`app`: FastAPI with the MCP endpoint mounted), the command line
(`cli/`: `python -m backend`, its commands and what they print) and MCP over stdio (`mcp_stdio`: a proxy to
the running service, or a service of its own). They build what they need through the wiring
(backend/bootstrap.py); nothing inside the layers imports them."""
