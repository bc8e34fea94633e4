"""The checks of the capacity report, one self-describing unit per check (id, description,
function) in families: pools and pairs, subscribers (HSS/SLF, S-CSCF load), trunks, takeovers,
site and shared-risk losses, elements, headroom, traffic (registration storm, session/Diameter/
ENUM/DNS rates). :mod:`imsdr.capacity.checks.registry` lists them; the report iterates it."""
