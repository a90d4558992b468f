import sys

from allocbench.cli import main

sys.exit(main())
