"""Inventory loading and validation."""
