"""Formatters: pure functions from a report to text."""
