"""Resolution and drift: offline RFC 3263/2782 over the DNS plan, and live verification."""
