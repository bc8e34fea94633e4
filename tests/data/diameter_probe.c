/*
 * Test-only freeDiameter extension: the "CSCF application" on top of a rendered client. Every
 * interval it sends one Cx User-Authorization-Request per configured user (Destination-Realm and
 * User-Name set, no Destination-Host: the client's rendered routes decide where it goes) and logs
 * each answer as "<CLOCK_MONOTONIC ms> <user> <Result-Code> <Origin-Host>".
 * Configuration lines: "realm R", "interval_ms N", "log PATH", "user NAME" (repeated).
 */
#include <freeDiameter/extension.h>
#include <pthread.h>
#include <time.h>

#define MAX_USERS 16

static char realm[256], log_path[512], users[MAX_USERS][128];
static int n_users, interval_ms = 200;
static FILE *log_file;
static pthread_t sender;
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static struct dict_object *cmd_uar, *avp_dr, *avp_un, *avp_pi, *avp_vni, *avp_ass, *avp_vsai, *avp_vid,
	*avp_aai, *avp_rc, *avp_oh, *avp_er, *avp_erc;

static long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

static int add_os(msg_or_avp *parent, struct dict_object *model, const char *text)
{
	struct avp *avp = NULL;
	union avp_value value;
	CHECK_FCT( fd_msg_avp_new(model, 0, &avp) );
	value.os.data = (uint8_t *)text;
	value.os.len = strlen(text);
	CHECK_FCT( fd_msg_avp_setvalue(avp, &value) );
	CHECK_FCT( fd_msg_avp_add(parent, MSG_BRW_LAST_CHILD, avp) );
	return 0;
}

static int add_u32(msg_or_avp *parent, struct dict_object *model, uint32_t number)
{
	struct avp *avp = NULL;
	union avp_value value;
	CHECK_FCT( fd_msg_avp_new(model, 0, &avp) );
	value.u32 = number;
	CHECK_FCT( fd_msg_avp_setvalue(avp, &value) );
	CHECK_FCT( fd_msg_avp_add(parent, MSG_BRW_LAST_CHILD, avp) );
	return 0;
}

static void answered(void *data, struct msg **answer)
{
	const char *user = data;
	struct avp *avp = NULL;
	struct avp_hdr *hdr = NULL;
	uint32_t rc = 0;
	char host[256] = "-";

	if (fd_msg_search_avp(*answer, avp_rc, &avp) == 0 && avp && fd_msg_avp_hdr(avp, &hdr) == 0 && hdr->avp_value)
		rc = hdr->avp_value->u32;
	avp = NULL;
	if (fd_msg_search_avp(*answer, avp_oh, &avp) == 0 && avp && fd_msg_avp_hdr(avp, &hdr) == 0 && hdr->avp_value)
		snprintf(host, sizeof(host), "%.*s", (int)hdr->avp_value->os.len, hdr->avp_value->os.data);
	pthread_mutex_lock(&log_lock);
	fprintf(log_file, "%ld %s %u %s\n", now_ms(), user, rc, host);
	fflush(log_file);
	pthread_mutex_unlock(&log_lock);
	fd_msg_free(*answer);
	*answer = NULL;
}

static int send_uar(const char *user)
{
	struct msg *req = NULL;
	struct msg_hdr *mh = NULL;
	struct avp *group = NULL;
	char identity[160];

	CHECK_FCT( fd_msg_new(cmd_uar, MSGFL_ALLOC_ETEID, &req) );
	CHECK_FCT( fd_msg_hdr(req, &mh) );
	mh->msg_appl = 16777216;
	CHECK_FCT( fd_msg_new_session(req, (os0_t)"probe", 5) );
	CHECK_FCT( fd_msg_avp_new(avp_vsai, 0, &group) );
	CHECK_FCT( add_u32(group, avp_vid, 10415) );
	CHECK_FCT( add_u32(group, avp_aai, 16777216) );
	CHECK_FCT( fd_msg_avp_add(req, MSG_BRW_LAST_CHILD, group) );
	CHECK_FCT( add_u32(req, avp_ass, 1) ); /* NO_STATE_MAINTAINED */
	CHECK_FCT( fd_msg_add_origin(req, 0) );
	CHECK_FCT( add_os(req, avp_dr, realm) );
	CHECK_FCT( add_os(req, avp_un, user) );
	snprintf(identity, sizeof(identity), "sip:%s", user);
	CHECK_FCT( add_os(req, avp_pi, identity) );
	CHECK_FCT( add_os(req, avp_vni, realm) );
	CHECK_FCT( fd_msg_send(&req, answered, (void *)user) );
	return 0;
}

static void *send_loop(void *arg)
{
	(void)arg;
	fd_core_waitstartcomplete();
	for (;;) {
		int i;
		for (i = 0; i < n_users; i++)
			send_uar(users[i]);
		usleep(interval_ms * 1000);
	}
	return NULL;
}

static int find_avp(const char *name, struct dict_object **out)
{
	return fd_dict_search(fd_g_config->cnf_dict, DICT_AVP, AVP_BY_NAME_ALL_VENDORS, name, out, ENOENT);
}

static int probe_entry(char *conffile)
{
	char line[600];
	FILE *conf = fopen(conffile, "r");
	if (!conf)
		return errno;
	while (fgets(line, sizeof(line), conf)) {
		line[strcspn(line, "\r\n")] = 0;
		if (!strncmp(line, "realm ", 6)) snprintf(realm, sizeof(realm), "%s", line + 6);
		else if (!strncmp(line, "log ", 4)) snprintf(log_path, sizeof(log_path), "%s", line + 4);
		else if (!strncmp(line, "interval_ms ", 12)) interval_ms = atoi(line + 12);
		else if (!strncmp(line, "user ", 5) && n_users < MAX_USERS) snprintf(users[n_users++], 128, "%s", line + 5);
	}
	fclose(conf);
	CHECK_PARAMS( (log_file = fopen(log_path, "a")) != NULL );
	CHECK_FCT( fd_dict_search(fd_g_config->cnf_dict, DICT_COMMAND, CMD_BY_NAME, "User-Authorization-Request",
				  &cmd_uar, ENOENT) );
	CHECK_FCT( find_avp("Destination-Realm", &avp_dr) );
	CHECK_FCT( find_avp("User-Name", &avp_un) );
	CHECK_FCT( find_avp("Public-Identity", &avp_pi) );
	CHECK_FCT( find_avp("Visited-Network-Identifier", &avp_vni) );
	CHECK_FCT( find_avp("Auth-Session-State", &avp_ass) );
	CHECK_FCT( find_avp("Vendor-Specific-Application-Id", &avp_vsai) );
	CHECK_FCT( find_avp("Vendor-Id", &avp_vid) );
	CHECK_FCT( find_avp("Auth-Application-Id", &avp_aai) );
	CHECK_FCT( find_avp("Result-Code", &avp_rc) );
	CHECK_FCT( find_avp("Origin-Host", &avp_oh) );
	(void)avp_er; (void)avp_erc;
	CHECK_POSIX( pthread_create(&sender, NULL, send_loop, NULL) );
	return 0;
}

EXTENSION_ENTRY("diameter_probe", probe_entry, "dict_ims_cxsh");
