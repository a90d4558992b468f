"""The exceptions for expected problems; the CLI turns each into one line and an exit code."""


class UserError(Exception):
    """Bad input or usage: 'allocbench: error: <message>', exit code 2; the message names the
    file or flag and the fix."""


class MeasurementFailed(Exception):
    """The measurement could not be made — a build failed, allocbench-run died — although the
    command was right: 'allocbench: error: <message>', exit code 3."""
