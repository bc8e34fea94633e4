"""What the later standards add to the seed study: IMS restoration (TS 23.380), PS access, the
504 restoration body, P-CSCF lists per packet gateway and the ENUM-outage PSTN breakout."""
