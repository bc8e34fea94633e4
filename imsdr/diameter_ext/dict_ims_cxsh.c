/*
 * dict_ims_cxsh: the 3GPP Cx/Dx and Sh Diameter applications for freeDiameter 1.2.1.
 *
 * freeDiameter 1.2.1's dict_dcca_3gpp.fdx defines the AVPs of Cx/Dx (TS 29.229) and Sh
 * (TS 29.329) but neither the applications nor their commands, and no extension shipped with it
 * registers them, so a client would advertise no application in its CER. This extension, written
 * by imsdr beside the rendered client configurations, defines
 *   Cx/Dx  Auth-Application-Id 16777216, vendor 3GPP (10415): UAR/UAA 300, SAR/SAA 301,
 *          LIR/LIA 302, MAR/MAA 303, RTR/RTA 304, PPR/PPA 305   (TS 29.229 6.1)
 *   Sh     Auth-Application-Id 16777217, vendor 3GPP (10415): UDR/UDA 306, PUR/PUA 307,
 *          SNR/SNA 308, PNR/PNA 309                              (TS 29.329 6.1)
 * and registers both as supported (auth), so they appear in every CER/CEA as
 * Vendor-Specific-Application-Id with Supported-Vendor-Id 10415.
 *
 * Build once per host (Debian: libfreediameter-dev) and install next to the other extensions:
 *   cc -shared -fPIC -O2 -o dict_ims_cxsh.fdx dict_ims_cxsh.c -lfdcore -lfdproto
 *   install -m 0644 dict_ims_cxsh.fdx /usr/lib/freeDiameter/
 */
#include <freeDiameter/extension.h>

struct ims_command {
	uint32_t code;
	const char *request;
	const char *answer;
};

static const struct ims_command cx_commands[] = {
	{ 300, "User-Authorization-Request", "User-Authorization-Answer" },
	{ 301, "Server-Assignment-Request", "Server-Assignment-Answer" },
	{ 302, "Location-Info-Request", "Location-Info-Answer" },
	{ 303, "Multimedia-Auth-Request", "Multimedia-Auth-Answer" },
	{ 304, "Registration-Termination-Request", "Registration-Termination-Answer" },
	{ 305, "Push-Profile-Request", "Push-Profile-Answer" },
};

static const struct ims_command sh_commands[] = {
	{ 306, "User-Data-Request", "User-Data-Answer" },
	{ 307, "Profile-Update-Request", "Profile-Update-Answer" },
	{ 308, "Subscribe-Notifications-Request", "Subscribe-Notifications-Answer" },
	{ 309, "Push-Notification-Request", "Push-Notification-Answer" },
};

static int add_application(struct dict_object *vendor, application_id_t id, const char *name,
			   const struct ims_command *commands, size_t count)
{
	struct dict_object *app = NULL;
	struct dict_application_data data = { id, (char *)name };
	size_t i;

	CHECK_FCT( fd_dict_new(fd_g_config->cnf_dict, DICT_APPLICATION, &data, vendor, &app) );
	for (i = 0; i < count; i++) {
		struct dict_cmd_data request = { commands[i].code, (char *)commands[i].request,
			CMD_FLAG_REQUEST | CMD_FLAG_PROXIABLE | CMD_FLAG_ERROR, CMD_FLAG_REQUEST | CMD_FLAG_PROXIABLE };
		struct dict_cmd_data answer = { commands[i].code, (char *)commands[i].answer,
			CMD_FLAG_REQUEST | CMD_FLAG_PROXIABLE, CMD_FLAG_PROXIABLE };
		CHECK_FCT( fd_dict_new(fd_g_config->cnf_dict, DICT_COMMAND, &request, app, NULL) );
		CHECK_FCT( fd_dict_new(fd_g_config->cnf_dict, DICT_COMMAND, &answer, app, NULL) );
	}
	CHECK_FCT( fd_disp_app_support(app, vendor, 1, 0) );
	return 0;
}

static int ims_cxsh_entry(char *conffile)
{
	struct dict_object *vendor = NULL;
	vendor_id_t id = 10415;

	(void)conffile;
	if (fd_dict_search(fd_g_config->cnf_dict, DICT_VENDOR, VENDOR_BY_ID, &id, &vendor, ENOENT) != 0) {
		struct dict_vendor_data data = { 10415, "3GPP" };
		CHECK_FCT( fd_dict_new(fd_g_config->cnf_dict, DICT_VENDOR, &data, NULL, &vendor) );
	}
	CHECK_FCT( add_application(vendor, 16777216, "3GPP Cx/Dx", cx_commands,
				   sizeof(cx_commands) / sizeof(cx_commands[0])) );
	CHECK_FCT( add_application(vendor, 16777217, "3GPP Sh", sh_commands,
				   sizeof(sh_commands) / sizeof(sh_commands[0])) );
	LOG_N("dict_ims_cxsh: Cx/Dx (16777216) and Sh (16777217) applications registered");
	return 0;
}

EXTENSION_ENTRY("dict_ims_cxsh", ims_cxsh_entry, "dict_dcca_3gpp");
