"""``imsdr apply``: a plan directory delivered to live servers, verified, rolled back on failure.

``targets`` reads the deployment targets file, ``state`` keeps what was applied (content-addressed
files, one lock), ``journal`` records every step, ``servers`` talks to BIND, Kamailio and Diameter
clients, ``steps`` builds and runs one target's steps, ``executor`` orders them, rolls back and
recovers.
"""
