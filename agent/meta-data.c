/*
 * meta-data: the agent's OCF 1.1 meta-data, with the reload-agent action
 * and reloadable parameters (Pacemaker then reloads the agent instead of
 * restarting the resource when only those change). Its shape passes the
 * OCF 1.1 RELAX NG schema (pcs) and resource-agents' ra-api-1.dtd, which
 * ocf-tester validates against (ref/ha-stack-apis.md §1.4): a DOCTYPE,
 * one longdesc then one shortdesc, content types string/integer/boolean
 * only, role monitors with different intervals. The DTD knows neither
 * reload-agent nor reloadable; the DOCTYPE's internal subset declares
 * both, as XML allows (the first declaration of an attribute binds).
 * resource-agents' metadata.rng cannot be extended that way and rejects
 * the reloadable attribute (doc/ocf-agent.md).
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
/* A parameter of the agent's own behaviour: reload-agent applies it. */
#define RPARAM(name, type, def, shortd, longd)                                                  \
	"<parameter name=\"" name "\" unique=\"0\" required=\"0\" reloadable=\"1\">\n"           \
	"<longdesc lang=\"en\">\n" longd "\n</longdesc>\n"                                      \
	"<shortdesc lang=\"en\">" shortd "</shortdesc>\n"                                       \
	"<content type=\"" type "\"" def "/>\n"                                                 \
	"</parameter>\n\n"
#define DEFAULT(v) " default=\"" v "\""

static const char meta_data[] =
	"<?xml version=\"1.0\"?>\n"
	"<!DOCTYPE resource-agent SYSTEM \"ra-api-1.dtd\" [\n"
	"<!ATTLIST action name (start|stop|monitor|promote|demote|notify|reload-agent|"
	"meta-data|validate-all) #REQUIRED>\n"
	"<!ATTLIST parameter reloadable (1|0) #IMPLIED>\n"
	"]>\n"
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
	      "drbd.conf syntax). drbd.ocf's drbd_resource is accepted too, with a\n"
	      "warning.")
	PARAM("config", "0", "0", "string", DEFAULT(AGENT_DEFAULT_CONFIG),
	      "path of the tandem configuration",
	      "The configuration file tandemd is started with, and that the agent\n"
	      "reads for the startup timeouts, allow-two-primaries, fencing and\n"
	      "validation. start (and the start notifications) make a running\n"
	      "tandemd re-read it. drbd.ocf's drbdconf is accepted too, with a\n"
	      "warning.")
	RPARAM("promotion_scores", "string", DEFAULT(AGENT_POLICY_SCORES_DEFAULT),
	       "promotion scores by data quality",
	       "Four non-decreasing integers, like drbd.ocf's adjust_master_score:\n"
	       "the score when the local data is only Consistent; when only the\n"
	       "peer's data is UpToDate; when the local data is UpToDate and the\n"
	       "peer's disk state is unknown; when the local data is UpToDate and\n"
	       "this node is Primary or the peer's disk state is known.\n"
	       "A score of 0 or less is removed, never set. A bad value fails start\n"
	       "and validate-all; the other actions use the default and warn.")
	RPARAM("wfc_timeout", "string", DEFAULT(AGENT_DEFAULT_WFC),
	       "how long start waits for the peer",
	       "How long start waits for the connection to the peer, in seconds\n"
	       "(drbd.ocf's default is 5 too); 0 waits as long as the start timeout\n"
	       "allows; \"config\" uses wfc-timeout, degr-wfc-timeout or\n"
	       "outdated-wfc-timeout of the startup section, as tandem-arbiterd\n"
	       "(else tandemd's metadata flags) says which applies; \"none\" does\n"
	       "not wait. A start that stops waiting still\n"
	       "succeeds.")
	RPARAM("stop_outdates_secondary", "boolean", DEFAULT("false"),
	       "outdate a disconnected Secondary while another node is promoted",
	       "When a Secondary stops, or gets a post notification while it is\n"
	       "disconnected, and Pacemaker has the resource promoted on another\n"
	       "node, mark the local data Outdated, so that it cannot be promoted\n"
	       "alone later. Relies on Pacemaker's notification variables.")
	RPARAM("remove_promotion_score_if_peer_primary", "boolean", DEFAULT("false"),
	       "no promotion score while the peer is Primary",
	       "Remove the promotion score while this node is Secondary and connected\n"
	       "to an UpToDate Primary peer, so that Pacemaker does not try to promote\n"
	       "here after losing contact with the peer while replication still works\n"
	       "(a cluster split). May delay a failover until tandemd notices the\n"
	       "peer is gone.")
	RPARAM("fail_promote_early_if_peer_primary", "boolean", DEFAULT("false"),
	       "fail a promote at once while the peer is Primary",
	       "A promote refused because the peer is still Primary fails at once\n"
	       "instead of retrying until tandemd sees the peer demote or go, as with\n"
	       "drbd.ocf's parameter of the same name.")
	RPARAM("unfence_if_all_uptodate", "boolean", DEFAULT("false"),
	       "remove the fence constraint once both disks are UpToDate",
	       "When Primary with both disks UpToDate, run tandem-unfence-peer, which\n"
	       "removes a fence constraint left behind.")
	RPARAM("unfence_extra_args", "string", DEFAULT(AGENT_DEFAULT_UNFENCE_ARGS),
	       "options of tandem-unfence-peer",
	       "The options unfence_if_all_uptodate passes to tandem-unfence-peer,\n"
	       "split at white space. drbd.ocf's default; --flock-required and\n"
	       "--unfence-only-if-owner-match are accepted and have no effect there.")
	RPARAM("ignore_missing_notifications", "boolean", DEFAULT("false"),
	       "accept a clone without notify=true",
	       "validate-all accepts a clone without notify=true (a warning instead\n"
	       "of an error). Without notifications the agent does not reconnect\n"
	       "after the peer starts and does not outdate on notifications.")
	RPARAM("adjust_master_score", "string", "",
	       "deprecated: use promotion_scores",
	       "drbd.ocf's name of promotion_scores, used when promotion_scores is\n"
	       "not set, with a warning.")
	RPARAM("remove_master_score_if_peer_primary", "string", "",
	       "deprecated: use remove_promotion_score_if_peer_primary",
	       "drbd.ocf's name of remove_promotion_score_if_peer_primary, used when\n"
	       "that is not set, with a warning. drbd.ocf's value \"unexpected\" is\n"
	       "taken as true.")
	PARAM("run_dir", "0", "0", "string", DEFAULT(AGENT_DEFAULT_RUN_DIR),
	      "tandemd's run directory",
	      "The directory of tandemd's control socket (tandemd --run-dir). Only\n"
	      "for tests and unusual installations.")
	PARAM("node", "0", "0", "string", "", "tandem's name of this node",
	      "The host name of this node in the tandem configuration (tandemd\n"
	      "--node); empty: uname -n. Only for tests and unusual installations;\n"
	      "tandem, Pacemaker and uname -n should agree on node names.")
	PARAM("tandemd", "0", "0", "string", DEFAULT(TANDEM_SBINDIR "/tandemd"),
	      "path of tandemd",
	      "The tandemd binary the agent starts if none is running; tandemadm\n"
	      "and tandem-unfence-peer are looked for next to it first.")
	"</parameters>\n\n"
	"<actions>\n"
	"<action name=\"start\" timeout=\"240s\"/>\n"
	"<action name=\"stop\" timeout=\"100s\"/>\n"
	"<action name=\"promote\" timeout=\"90s\"/>\n"
	"<action name=\"demote\" timeout=\"90s\"/>\n"
	"<action name=\"notify\" timeout=\"90s\"/>\n"
	"<action name=\"monitor\" depth=\"0\" timeout=\"20s\" interval=\"29s\" "
	"role=\"Promoted\"/>\n"
	"<action name=\"monitor\" depth=\"0\" timeout=\"20s\" interval=\"31s\" "
	"role=\"Unpromoted\"/>\n"
	"<action name=\"reload-agent\" timeout=\"30s\"/>\n"
	"<action name=\"meta-data\" timeout=\"5s\"/>\n"
	"<action name=\"validate-all\" timeout=\"30s\"/>\n"
	"</actions>\n"
	"</resource-agent>\n";

void meta_data_print(void)
{
	fputs(meta_data, stdout);
}
