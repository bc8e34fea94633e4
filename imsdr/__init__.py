"""imsdr: IMS core-network disaster-recovery planning."""

__version__ = "0.1.0"
