/*
 * predict_citus.c - scoring by name in a statement over a Citus table
 * (issue 33, point 4).
 *
 * Citus runs a statement over a distributed table as shard statements on
 * the workers, which have no catalog of named models (it lives on the
 * coordinator): kernel_predict('m', f) would fail there with "model does
 * not exist".  Before Citus plans such a statement, this planner hook
 * rewrites every by-name scoring call whose name is a constant into its
 * bytea twin fed by a scalar subquery:
 *
 *     kernel_predict('m', f)  ->  kernel_predict((SELECT kernel_model_get('m')), f)
 *
 * Citus plans the subquery on the coordinator, runs it once per execution
 * before the shard statements and sends its result (the model's bytes) to
 * each worker once, as an intermediate result that the shard statements
 * read.  So the model is looked up, and the caller's read permission
 * checked, by kernel_model_get as the current user under the statement's
 * snapshot, at execution: a prepared statement sees a deploy made between
 * two executions, a role switch is checked again, and nothing about a
 * model is kept in a plan (no plan invalidation, no role-dependent plan,
 * no model literal in EXPLAIN or in each shard statement).
 *
 * The hook runs before Citus's (Citus is loaded first, so its hook is our
 * predecessor): Citus copies the statement before PostgreSQL's planner
 * simplifies it and builds the shard statements of an UPDATE from that
 * copy, so a rewrite during planning (a support function's
 * SupportRequestSimplify, replacing the name by the model as a constant)
 * would not reach the workers; a model constant would also be shipped in
 * every shard's statement and kept in cached plans.  The by-name functions
 * are recognised by their support function (kernel_ml_by_name_support),
 * their bytea twins by name and signature in the same schema.  A statement
 * that touches no distributed table is left alone: on one node scoring by
 * name keeps its own lookup per statement snapshot (catalog_predict.c).  A
 * name that is not a constant (a column, a parameter) is left alone too:
 * the workers then refuse it, with a hint (catalog.c).  kernel_ml must be
 * loaded before the statement is planned (shared_preload_libraries =
 * 'citus,kernel_ml'); the support function refuses a statement that the
 * hook did not see.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "commands/extension.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "nodes/supportnodes.h"
#include "nodes/pathnodes.h"
#include "optimizer/planner.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"

#include "predict_citus.h"

PG_FUNCTION_INFO_V1(kernel_ml_by_name_support);

static planner_hook_type prev_planner_hook = NULL;

/* The OID of kernel_ml_by_name_support, once recognised (reset on pg_proc changes). */
static Oid	support_oid = InvalidOid;

/* Plannings under way through km_planner (0: the hook did not see this one). */
static int	hook_depth = 0;

static bool is_by_name(Oid funcid);
static bool rewritable(Node *node);
static bool statement_touches_distributed(Query *parse);

static void
forget_support_oid(Datum arg, int cacheid, uint32 hashvalue)
{
	support_oid = InvalidOid;
}

/* Whether funcid is a by-name scoring function of kernel_ml. */
static bool
is_by_name(Oid funcid)
{
	RegProcedure support = get_func_support(funcid);
	FmgrInfo	flinfo;

	if (!OidIsValid(support))
		return false;
	if (support == support_oid)
		return true;
	/* a support function takes internal: C or internal language, never a PL */
	fmgr_info(support, &flinfo);
	if (flinfo.fn_addr != kernel_ml_by_name_support)
		return false;
	support_oid = support;
	return true;
}

/* A call this hook rewrites: a by-name function with a constant, non-null name. */
static bool
rewritable(Node *node)
{
	FuncExpr   *fe;
	Const	   *name;

	if (!IsA(node, FuncExpr))
		return false;
	fe = (FuncExpr *) node;
	if (fe->args == NIL || !IsA(linitial(fe->args), Const))
		return false;
	name = (Const *) linitial(fe->args);
	return name->consttype == TEXTOID && !name->constisnull && is_by_name(fe->funcid);
}

typedef struct CallScan
{
	bool		found;			/* a rewritable call */
	List	   *relids;			/* every table the statement reads or writes */
} CallScan;

static bool
scan_walker(Node *node, CallScan *scan)
{
	if (node == NULL)
		return false;
	if (IsA(node, Query))
		return query_tree_walker((Query *) node, scan_walker, scan, QTW_EXAMINE_RTES_BEFORE);
	if (IsA(node, RangeTblEntry))
	{
		RangeTblEntry *rte = (RangeTblEntry *) node;

		if (rte->rtekind == RTE_RELATION)
			scan->relids = list_append_unique_oid(scan->relids, rte->relid);
		return false;
	}
	if (!scan->found && rewritable(node))
		scan->found = true;
	return expression_tree_walker(node, scan_walker, scan);
}

/*
 * Whether one of relids is a distributed Citus table (hash, range or append
 * distributed: partmethod other than 'n'), by Citus's catalog
 * pg_dist_partition, which every role may read.  A statement over reference
 * tables or Citus-managed local tables alone is left alone: Citus runs it
 * on one node, the coordinator when it holds a copy, and its logical
 * planner refuses the subquery in a statement whose FROM has only
 * reference tables.
 */
static bool
touches_distributed(List *relids)
{
	Datum	   *elems;
	int			n = 0;
	ListCell   *lc;
	Oid			argtypes[1] = {OIDARRAYOID};
	Datum		values[1];
	bool		isnull;
	bool		result;
	int			rc;

	if (relids == NIL || !OidIsValid(get_extension_oid("citus", true)))
		return false;
	elems = palloc(sizeof(Datum) * list_length(relids));
	foreach(lc, relids)
		elems[n++] = ObjectIdGetDatum(lfirst_oid(lc));
	values[0] = PointerGetDatum(construct_array(elems, n, OIDOID, sizeof(Oid), true,
												TYPALIGN_INT));
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	rc = SPI_execute_with_args("SELECT EXISTS (SELECT FROM pg_catalog.pg_dist_partition p "
							   "WHERE p.logicalrelid::pg_catalog.oid OPERATOR(pg_catalog.=) ANY ($1) "
							   "AND p.partmethod OPERATOR(pg_catalog.<>) 'n')",
							   1, argtypes, values, NULL, true, 1);
	if (rc != SPI_OK_SELECT || SPI_processed != 1)
		elog(ERROR, "could not read pg_dist_partition: %s", SPI_result_code_string(rc));
	result = DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	SPI_finish();
	return result && !isnull;
}

/* The function named fname in namespace nsp taking the nargs argtypes, or InvalidOid. */
static Oid
function_in(Oid nsp, const char *fname, Oid *argtypes, int nargs)
{
	oidvector  *args = buildoidvector(argtypes, nargs);
	HeapTuple	tup = SearchSysCache3(PROCNAMEARGSNSP, CStringGetDatum(fname),
									  PointerGetDatum(args), ObjectIdGetDatum(nsp));
	Oid			oid;

	if (!HeapTupleIsValid(tup))
		return InvalidOid;
	oid = ((Form_pg_proc) GETSTRUCT(tup))->oid;
	ReleaseSysCache(tup);
	return oid;
}

/*
 * The bytea twin of a by-name call, fed by (SELECT kernel_model_get(name)),
 * or NULL when the schema has no such twin.
 */
static Node *
bytea_twin(FuncExpr *fe)
{
	HeapTuple	tup = SearchSysCache1(PROCOID, ObjectIdGetDatum(fe->funcid));
	Form_pg_proc proc;
	Oid			argtypes[FUNC_MAX_ARGS];
	Oid			twin;
	Oid			get;
	Oid			text_arg[1] = {TEXTOID};
	FuncExpr   *call;
	Query	   *sub;
	SubLink    *link;
	FuncExpr   *out;

	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for function %u", fe->funcid);
	proc = (Form_pg_proc) GETSTRUCT(tup);
	memcpy(argtypes, proc->proargtypes.values, sizeof(Oid) * proc->pronargs);
	argtypes[0] = BYTEAOID;
	twin = function_in(proc->pronamespace, NameStr(proc->proname), argtypes, proc->pronargs);
	get = function_in(proc->pronamespace, "kernel_model_get", text_arg, 1);
	ReleaseSysCache(tup);
	if (!OidIsValid(twin) || !OidIsValid(get) || get_func_rettype(get) != BYTEAOID ||
		get_func_rettype(twin) != fe->funcresulttype)
		return NULL;

	call = makeFuncExpr(get, BYTEAOID, list_make1(copyObject(linitial(fe->args))),
						InvalidOid, exprCollation(linitial(fe->args)), COERCE_EXPLICIT_CALL);
	call->location = exprLocation(linitial(fe->args));
	sub = makeNode(Query);
	sub->commandType = CMD_SELECT;
	sub->querySource = QSRC_ORIGINAL;
	sub->canSetTag = true;
	sub->jointree = makeFromExpr(NIL, NULL);
	sub->targetList = list_make1(makeTargetEntry((Expr *) call, 1,
												 pstrdup("kernel_model_get"), false));
	link = makeNode(SubLink);
	link->subLinkType = EXPR_SUBLINK;
	link->subselect = (Node *) sub;
	link->location = -1;

	out = makeFuncExpr(twin, fe->funcresulttype,
					   lcons(link, list_copy_tail(fe->args, 1)),
					   fe->funccollid, fe->inputcollid, fe->funcformat);
	out->funcvariadic = fe->funcvariadic;
	out->location = fe->location;
	return (Node *) out;
}

typedef struct Rewrite
{
	bool		changed;		/* a call of the current query level was rewritten */
} Rewrite;

static Node *
rewrite_mutator(Node *node, Rewrite *rw)
{
	if (node == NULL)
		return NULL;
	if (IsA(node, Query))
	{
		bool		outer = rw->changed;
		Query	   *q;

		rw->changed = false;
		q = query_tree_mutator((Query *) node, rewrite_mutator, rw, 0);
		if (rw->changed)
			q->hasSubLinks = true;
		rw->changed = outer;
		return (Node *) q;
	}
	node = expression_tree_mutator(node, rewrite_mutator, rw);
	if (rewritable(node))
	{
		Node	   *twin = bytea_twin((FuncExpr *) node);

		if (twin != NULL)
		{
			rw->changed = true;
			return twin;
		}
	}
	return node;
}

static bool
statement_touches_distributed(Query *parse)
{
	CallScan	scan = {false, NIL};
	bool		result;

	(void) scan_walker((Node *) parse, &scan);
	result = touches_distributed(scan.relids);
	list_free(scan.relids);
	return result;
}

/*
 * kernel_ml_by_name_support(internal): the support function of the by-name
 * scoring functions.  It marks them for the planner hook below and changes
 * no call: on one node the call keeps its run-time lookup.  It refuses a
 * constant name in a statement over a distributed table that the hook did
 * not see: kernel_ml was loaded while the statement was being planned
 * (by this very call), after Citus had taken the statement as it was; the
 * workers would fail on the name.
 */
Datum
kernel_ml_by_name_support(PG_FUNCTION_ARGS)
{
	Node	   *rawreq = (Node *) PG_GETARG_POINTER(0);

	if (hook_depth == 0 && IsA(rawreq, SupportRequestSimplify))
	{
		SupportRequestSimplify *req = (SupportRequestSimplify *) rawreq;
		PlannerInfo *root = req->root;

		if (root != NULL && rewritable((Node *) req->fcall))
		{
			while (root->parent_root != NULL)
				root = root->parent_root;
			if (statement_touches_distributed(root->parse))
				ereport(ERROR,
						(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
						 errmsg("scoring by name on a distributed table needs kernel_ml loaded before the statement is planned"),
						 errdetail("kernel_ml was loaded while this statement was being planned, after Citus had taken it as it was; the workers have no catalog of named models."),
						 errhint("Add kernel_ml to shared_preload_libraries after citus on the coordinator ('citus,kernel_ml'); kernel_ml is now loaded in this session, so running the statement again works.")));
		}
	}
	PG_RETURN_POINTER(NULL);
}

/* The next planner, counted in hook_depth. */
static PlannedStmt *
plan_under_hook(Query *parse, const char *query_string, int cursorOptions,
				ParamListInfo boundParams)
{
	PlannedStmt *result;

	hook_depth++;
	PG_TRY();
	{
		if (prev_planner_hook)
			result = prev_planner_hook(parse, query_string, cursorOptions, boundParams);
		else
			result = standard_planner(parse, query_string, cursorOptions, boundParams);
	}
	PG_FINALLY();
	{
		hook_depth--;
	}
	PG_END_TRY();
	return result;
}

static PlannedStmt *
km_planner(Query *parse, const char *query_string, int cursorOptions,
		   ParamListInfo boundParams)
{
	CallScan	scan = {false, NIL};
	int			nestlevel = -1;
	PlannedStmt *result;

	(void) scan_walker((Node *) parse, &scan);
	if (scan.found && touches_distributed(scan.relids))
	{
		Rewrite		rw = {false};

		parse = (Query *) rewrite_mutator((Node *) parse, &rw);

		/*
		 * Citus's router planner would send a SELECT that reads one shard
		 * to its worker whole, the subquery included, and the worker has no
		 * catalog; without it, Citus plans the subquery on the coordinator
		 * (an intermediate result), as for a SELECT over several shards.
		 * (UPDATE and DELETE: Citus evaluates the subquery on the
		 * coordinator itself.)
		 */
		if (GetConfigOption("citus.enable_router_execution", true, false) != NULL)
		{
			nestlevel = NewGUCNestLevel();
			(void) set_config_option("citus.enable_router_execution", "off",
									 PGC_USERSET, PGC_S_SESSION, GUC_ACTION_SAVE,
									 true, 0, false);
		}
	}
	list_free(scan.relids);
	result = plan_under_hook(parse, query_string, cursorOptions, boundParams);
	if (nestlevel >= 0)
		AtEOXact_GUC(true, nestlevel);
	return result;
}

/* _PG_init: install the planner hook, after Citus's if Citus is loaded. */
void
km_predict_citus_init(void)
{
	prev_planner_hook = planner_hook;
	planner_hook = km_planner;
	CacheRegisterSyscacheCallback(PROCOID, forget_support_oid, (Datum) 0);
}
