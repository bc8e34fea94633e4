"""Formatters: pure functions from a report to text."""

# Tables of more rows than this show a summary unless --all is given (capacity, simulate,
# scenarios, render dns); here, not in output.tables, so that render dns's table does not import
# the capacity package with it.
SUMMARY_ABOVE = 60  # rows; at or below this a report is always shown in full
