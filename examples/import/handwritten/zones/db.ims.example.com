; ims.example.com as the core sites see it
$ORIGIN ims.example.com.
$TTL 3600
@       IN SOA ns1 dnsadmin.example.com. (
                2024061501 ; serial
                3600 600 1209600 300 )
        IN NS  ns1
        IN NS  ns2
ns1     IN A   192.0.2.53
ns2     IN A   192.0.2.117

; the home domain: I-CSCFs, UDP and TCP
@       300 IN NAPTR 10 10 "s" "SIP+D2U" "" _sip._udp
@       300 IN NAPTR 10 20 "s" "SIP+D2T" "" _sip._tcp
$TTL 60
_sip._udp      IN SRV 10 50 5060 icscf1
               IN SRV 10 50 5060 icscf2
_sip._tcp      IN SRV 10 50 5060 icscf1
               IN SRV 10 50 5060 icscf2
icscf1  IN A    192.0.2.20
        IN AAAA 2001:db8:e::20
icscf2  IN A    192.0.2.84

; S-CSCF pool, published for the I-CSCFs
scscf   300 IN NAPTR 10 10 "s" "SIP+D2U" "" _sip._udp.scscf
_sip._udp.scscf IN SRV 10 100 5070 scscf-east
                IN SRV 10 100 5070 scscf-west
scscf-east IN A 192.0.2.21
scscf-west IN A 192.0.2.85

hss1    IN A   192.0.2.30
hss2    IN A   192.0.2.94
hss     IN CNAME hss1      ; an alias the HSS clients use: not an element of its own
