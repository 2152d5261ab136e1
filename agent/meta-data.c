/*
 * meta-data: the agent's OCF 1.1 meta-data. Its shape passes the three
 * validators that disagree (ref/ha-stack-apis.md §1.4): the OCF 1.1
 * RELAX NG schema, resource-agents' ra-api-1.dtd (ocf-tester) and
 * resource-agents' metadata.rng: a DOCTYPE, one longdesc then one
 * shortdesc, content types string/integer/boolean only, role monitors
 * with different intervals, and no reloadable parameters or reload-agent
 * action (the DTD rejects both; the action is implemented all the same,
 * doc/ocf-agent.md).
 */
#include "config.h"

#include <stdio.h>

#include "agent.h"

#define PARAM(name, req, uniq, type, def, shortd, longd)                                        \
	"<parameter name=\"" name "\" unique=\"" uniq "\" required=\"" req "\">\n"              \
	"<longdesc lang=\"en\">\n" longd "\n</longdesc>\n"                                      \
	"<shortdesc lang=\"en\">" shortd "</shortdesc>\n"                                       \
	"<content type=\"" type "\"" def "/>\n"                                                 \
	"</parameter>\n\n"
#define DEFAULT(v) " default=\"" v "\""

static const char meta_data[] =
	"<?xml version=\"1.0\"?>\n"
	"<!DOCTYPE resource-agent SYSTEM \"ra-api-1.dtd\">\n"
	"<resource-agent name=\"tandem\" version=\"" PACKAGE_VERSION "\">\n"
	"<version>1.1</version>\n\n"
	"<longdesc lang=\"en\">\n"
	"Manages a tandem resource (a user-space replacement for DRBD 8.4, served\n"
	"by tandemd) as a promotable clone: promoted = Primary (the volumes are\n"
	"exported over NBD), unpromoted = Secondary.\n\n"
	"Configure it as a promotable clone with notify=true, promoted-max=1,\n"
	"clone-max=2 and clone-node-max=1, and two monitor operations with\n"
	"different intervals for the roles Promoted and Unpromoted.\n\n"
	"The agent talks to tandemd over its control socket and starts tandemd\n"
	"(in a session of its own) if it is not running. start brings the\n"
	"resource up as Secondary and waits for the peer; it never promotes.\n"
	"Every start, probe and monitor publishes a promotion score derived from\n"
	"the data quality (crm_attribute --promotion -l reboot); data that must\n"
	"not be promoted has no score at all. promote refuses, naming the cause,\n"
	"when the peer is Primary, the disk is Outdated, fencing failed or a\n"
	"cli-ban or fence constraint forbids it; demote refuses while the export\n"
	"is in use. See ocf_tandem_tandem(7) and doc/ocf-agent.md.\n"
	"</longdesc>\n"
	"<shortdesc lang=\"en\">Manages a tandem replicated volume as a promotable "
	"clone</shortdesc>\n\n"
	"<parameters>\n"
	PARAM("resource", "1", "1", "string", "", "tandem resource name",
	      "The name of the resource in the tandem configuration (tandem.conf or\n"
	      "drbd.conf syntax).")
	PARAM("config", "0", "0", "string", DEFAULT(AGENT_DEFAULT_CONFIG),
	      "path of the tandem configuration",
	      "The configuration file tandemd is started with, and that the agent\n"
	      "reads for the startup timeouts, allow-two-primaries and validation.")
	PARAM("promotion_scores", "0", "0", "string", DEFAULT(AGENT_POLICY_SCORES_DEFAULT),
	      "promotion scores by data quality",
	      "Four non-decreasing integers, like drbd.ocf's adjust_master_score:\n"
	      "the score when the local data is only Consistent; when only the\n"
	      "peer's data is UpToDate; when the local data is UpToDate and the\n"
	      "peer's disk state is unknown; when the local data is UpToDate and\n"
	      "this node is Primary or the peer's disk state is known.\n"
	      "A score of 0 or less is removed, never set.")
	PARAM("wfc_timeout", "0", "0", "string", DEFAULT("config"),
	      "how long start waits for the peer",
	      "How long start waits for the connection to the peer: \"config\"\n"
	      "uses wfc-timeout, degr-wfc-timeout or outdated-wfc-timeout of the\n"
	      "startup section, as tandemd says which applies; a number of seconds\n"
	      "applies to all three; 0 waits as long as the start timeout allows;\n"
	      "\"none\" does not wait. A start that stops waiting still succeeds.")
	PARAM("stop_outdates_secondary", "0", "0", "boolean", DEFAULT("false"),
	      "outdate a Secondary that stops while another node is promoted",
	      "When a Secondary is stopped while Pacemaker has the resource promoted\n"
	      "on another node, mark the local data Outdated (the metadata, after\n"
	      "the resource is down), so that it cannot be promoted alone later.\n"
	      "Relies on Pacemaker's notification variables.")
	PARAM("remove_promotion_score_if_peer_primary", "0", "0", "boolean", DEFAULT("false"),
	      "no promotion score while the peer is Primary",
	      "Remove the promotion score while this node is Secondary and connected\n"
	      "to an UpToDate Primary peer, so that Pacemaker does not try to promote\n"
	      "here after losing contact with the peer while replication still works\n"
	      "(a cluster split). May delay a failover until tandemd notices the\n"
	      "peer is gone.")
	PARAM("unfence_if_all_uptodate", "0", "0", "boolean", DEFAULT("false"),
	      "remove the fence constraint once both disks are UpToDate",
	      "When Primary with both disks UpToDate, run tandem-unfence-peer, which\n"
	      "removes a fence constraint left behind.")
	PARAM("run_dir", "0", "0", "string", DEFAULT(AGENT_DEFAULT_RUN_DIR),
	      "tandemd's run directory",
	      "The directory of tandemd's control socket (tandemd --run-dir). Only\n"
	      "for tests and unusual installations.")
	PARAM("node", "0", "0", "string", "", "tandem's name of this node",
	      "The host name of this node in the tandem configuration (tandemd\n"
	      "--node); empty: uname -n. Only for tests and unusual installations;\n"
	      "tandem, Pacemaker and uname -n should agree on node names.")
	PARAM("tandemd", "0", "0", "string", DEFAULT(TANDEM_SBINDIR "/tandemd"),
	      "path of tandemd", "The tandemd binary the agent starts if none is running.")
	"</parameters>\n\n"
	"<actions>\n"
	"<action name=\"start\" timeout=\"240s\"/>\n"
	"<action name=\"stop\" timeout=\"100s\"/>\n"
	"<action name=\"promote\" timeout=\"90s\"/>\n"
	"<action name=\"demote\" timeout=\"90s\"/>\n"
	"<action name=\"notify\" timeout=\"90s\"/>\n"
	"<action name=\"monitor\" depth=\"0\" timeout=\"20s\" interval=\"20s\" "
	"role=\"Unpromoted\"/>\n"
	"<action name=\"monitor\" depth=\"0\" timeout=\"20s\" interval=\"10s\" "
	"role=\"Promoted\"/>\n"
	"<action name=\"meta-data\" timeout=\"5s\"/>\n"
	"<action name=\"validate-all\" timeout=\"30s\"/>\n"
	"</actions>\n"
	"</resource-agent>\n";

void meta_data_print(void)
{
	fputs(meta_data, stdout);
}
