"""``python -m dpreg ...``: the same command line as the ``dpreg`` script (:mod:`dpreg.cli`), for
environments where the script is not on PATH (a virtualenv that is not activated, ``PYTHONPATH``)."""
import sys

from .cli import main

sys.exit(main())
