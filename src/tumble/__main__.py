import sys

from .user.cli import main

sys.exit(main())
