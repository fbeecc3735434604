import sys

try:
    from backend.entrypoints.cli.main import main
except KeyboardInterrupt:  # Ctrl+C while the CLI still loads its libraries (a second or more): no traceback
    print("interrupted", file=sys.stderr)
    sys.exit(130)

sys.exit(main())
