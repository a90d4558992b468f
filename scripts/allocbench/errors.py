"""The one exception for expected problems: bad input, missing tools, usage."""


class UserError(Exception):
    """Printed as 'allocbench: error: <message>' with exit code 2; the message names the fix."""
