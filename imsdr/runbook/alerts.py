"""The names of the alerts ``render monitoring`` writes, as the runbook pages name them.

The Declare step of an element's page says which alert fires when the element fails; the rule
files (imsdr.monitoring) use these same names, so the page and the alert cannot disagree.
"""

DNS_DRIFT = "ImsdrDnsDrift"
DNS_SERIALS_DIFFER = "ImsdrDnsSerialsDiffer"
DNS_VIEW_UNMONITORED = "ImsdrDnsViewNotMonitored"
VERIFY_FAILED = "ImsdrVerifyFailed"
DISPATCHER_DOWN = "ImsdrDispatcherDestinationDown"
DISPATCHER_UNKNOWN = "ImsdrDispatcherStateUnknown"
DIAMETER_PEER_NOT_OPEN = "ImsdrDiameterPeerNotOpen"
HEADROOM_LOST = "ImsdrFailureHeadroomLost"
