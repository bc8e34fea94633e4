"""Package data: the C source of the freeDiameter extension ``dict_ims_cxsh.fdx`` that imsdr writes
beside the rendered Diameter clients (see imsdr/diameter.py and docs/diameter.md)."""
