"""DNS planning and rendering: record model, in-memory plan, BIND/Kamailio writers, lint."""
