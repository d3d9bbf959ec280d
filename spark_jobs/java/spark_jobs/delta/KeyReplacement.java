package spark_jobs.delta;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;

import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SaveMode;
import org.apache.spark.sql.catalyst.analysis.UnresolvedAttribute$;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.InSubquery;
import org.apache.spark.sql.catalyst.expressions.ListQuery;
import org.apache.spark.sql.catalyst.expressions.ListQuery$;
import org.apache.spark.sql.catalyst.expressions.Literal;
import org.apache.spark.sql.catalyst.plans.logical.DeleteFromTable;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.delta.DeltaLog;
import org.apache.spark.sql.delta.DeltaOperations;
import org.apache.spark.sql.delta.OptimisticTransaction;
import org.apache.spark.sql.delta.OptimisticTransaction$;
import org.apache.spark.sql.delta.Snapshot;
import org.apache.spark.sql.delta.VersionChecksum;
import org.apache.spark.sql.delta.actions.Action;
import org.apache.spark.sql.delta.actions.AddFile;
import org.apache.spark.sql.delta.actions.FileAction;
import org.apache.spark.sql.delta.actions.RemoveFile;
import org.apache.spark.sql.delta.commands.DMLWithDeletionVectorsHelper$;
import org.apache.spark.sql.delta.commands.DeleteCommand;
import org.apache.spark.sql.delta.commands.DeletionVectorUtils$;
import org.apache.spark.sql.delta.commands.TouchedFileWithDV;
import org.apache.spark.sql.delta.files.TahoeBatchFileIndex;
import org.apache.spark.sql.execution.datasources.LogicalRelation$;
import org.apache.spark.sql.execution.metric.SQLMetric;
import org.apache.spark.sql.execution.metric.SQLMetrics$;

import scala.Option;
import scala.Tuple2;
import scala.collection.immutable.Seq;
import scala.jdk.javaapi.CollectionConverters;

/**
 * A small batch's change of a latest-state Delta table in one commit, its two halves made at once: the stored rows
 * of the batch's keys marked deleted (deletion vectors, Delta's own DELETE of a {@code replaceWhere}) on a thread
 * of its own, started as soon as the keys are known, while the caller works out and writes the new rows.
 *
 * <p>A {@code replaceWhere} write does the same in one commit, but one half after the other, and only once the new
 * rows' schema is known: the delete (a scan of the stored keys, the deletion vectors' files) waited for the
 * parse schema's inference and then the rows' write waited for it. Here the delete starts with {@link #start} or
 * {@link #startJoined}, the caller infers and builds the rows meanwhile, and {@link #finish} writes them and
 * commits both halves with the transaction the delete read the table in (Delta's conflict checks as for the
 * {@code replaceWhere}). A replacement never finished commits nothing: {@link #abandon} waits for the delete; the
 * deletion vector files it wrote belong to no commit (a {@code VACUUM} removes them).
 *
 * <p>When the checksum file of the table's version lists its files (as Delta 4.0 writes it for a table of few
 * files), the delete takes them from there, with their statistics, instead of Delta's log replay and its scan of
 * the files' statistics, and marks the touched files itself: an incremental run of 5,082 records had 7 Spark jobs
 * instead of 13 (benchmarks/results.md 2026-12-02). Otherwise it lists and marks them as Delta's DELETE does.
 */
public final class KeyReplacement {
    private final SparkSession spark;
    private final DeltaLog log;
    private final OptimisticTransaction txn;
    private final CompletableFuture<Deleted> deleted;
    private volatile Seq<FileAction> written;  // the rows write() wrote, not committed yet

    /** The delete's actions and its command's metrics. */
    private record Deleted(Seq<Action> actions, scala.collection.immutable.Map<String, SQLMetric> metrics) {}

    /** The delete of a replacement, run on its thread. */
    private interface Delete {
        void run() throws Exception;
    }

    private KeyReplacement(SparkSession spark, String path) {
        this.spark = spark;
        this.log = DeltaLog.forTable(spark, path);
        this.txn = log.startTransaction(Option.empty(), Option.empty());
        this.deleted = new CompletableFuture<>();
    }

    private KeyReplacement launch(Delete delete) {
        Thread thread = new Thread(() -> {
            SparkSession.setActiveSession(spark);
            OptimisticTransaction$.MODULE$.setActive(txn);
            try {
                delete.run();
            } catch (Throwable exc) {
                deleted.completeExceptionally(exc);
            } finally {
                OptimisticTransaction$.MODULE$.clearActive();
            }
        }, "spark-jobs-key-delete");
        thread.setDaemon(true);
        thread.start();
        return this;
    }

    /**
     * Begin replacing the rows the SQL {@code predicate} (over the table's columns, e.g. {@code _key IN (...)})
     * selects in the Delta table at {@code path}: their deletion (Delta's DELETE) starts on a thread of its own.
     */
    public static KeyReplacement start(SparkSession spark, String path, String predicate) {
        KeyReplacement replacement = new KeyReplacement(spark, path);
        return replacement.launch(() -> replacement.deleteWhere(predicate));
    }

    /**
     * Begin replacing the rows of the Delta table at {@code path} whose {@code _key} is one of {@code keys}' (a
     * frame of one string column): their deletion starts on a thread of its own. The rows are found by a semi-join
     * of the table's keys with {@code keys}, so no list of the keys is ever in a plan (a predicate listing thousands
     * of keys is parsed, analysed and printed at every step of a DELETE).
     */
    public static KeyReplacement startJoined(SparkSession spark, String path, Dataset<Row> keys) {
        KeyReplacement replacement = new KeyReplacement(spark, path);
        return replacement.launch(() -> replacement.deleteJoined(keys));
    }

    private void deleteWhere(String predicate) throws Exception {
        LogicalPlan relation = LogicalRelation$.MODULE$.apply(
            log.createRelation(log.createRelation$default$1(), Option.apply(txn.snapshot()), Option.empty(), false),
            false);
        Expression condition = spark.sessionState().sqlParser().parseExpression(predicate);
        LogicalPlan command = spark.sessionState().analyzer().execute(new DeleteFromTable(relation, condition));
        spark.sessionState().analyzer().checkAnalysis(command);
        DeleteCommand delete = (DeleteCommand) command;
        Tuple2<Seq<Action>, ?> result = delete.performDelete(spark, log, txn);
        deleted.complete(new Deleted(result._1(), delete.metrics()));
    }

    /** What Delta's DELETE does with deletion vectors, the rows matched by a semi-join instead of a predicate. */
    private void deleteJoined(Dataset<Row> keys) {
        Snapshot snapshot = txn.snapshot();
        // the files from the version's checksum file when it lists them: no log replay (a Spark job) to list them,
        // and the touched files' statistics at hand (see below)
        Seq<AddFile> listed = checksumFiles(snapshot);
        Seq<AddFile> candidates;
        if (listed != null) {
            txn.trackReadPredicates(seq(Literal.TrueLiteral()), false, true);
            txn.trackFilesRead(listed);
            candidates = listed;
        } else {
            candidates = txn.filterFiles(seq(Literal.TrueLiteral()), true);  // with their row counts
        }
        TahoeBatchFileIndex files = new TahoeBatchFileIndex(spark, "delete", candidates, log, log.dataPath(),
                                                            snapshot, false);
        LogicalPlan relation = LogicalRelation$.MODULE$.apply(
            log.createRelation(log.createRelation$default$1(), Option.apply(snapshot), Option.empty(), false), false);
        Dataset<Row> target = DMLWithDeletionVectorsHelper$.MODULE$.createTargetDfForScanningForMatches(
            spark, relation, files);
        ListQuery query = ListQuery$.MODULE$.apply(
            keys.queryExecution().logical(), ListQuery$.MODULE$.apply$default$2(), ListQuery$.MODULE$.apply$default$3(),
            ListQuery$.MODULE$.apply$default$4(), ListQuery$.MODULE$.apply$default$5(),
            ListQuery$.MODULE$.apply$default$6());
        Expression condition = new InSubquery(seq(UnresolvedAttribute$.MODULE$.quoted("_key")), query);
        Seq<TouchedFileWithDV> touched = DMLWithDeletionVectorsHelper$.MODULE$.findTouchedFiles(
            spark, txn, DeletionVectorUtils$.MODULE$.deletionVectorsReadable(snapshot, Option.empty(), Option.empty()),
            log, target, files, condition, "DELETE");
        Map<String, SQLMetric> metrics = new HashMap<>();
        List<Action> actions = new ArrayList<>();
        long removed = 0;
        if (!touched.isEmpty()) {
            long removedFiles;
            if (listed != null && widenable(touched)) {
                // what processUnmodifiedData does, without its two jobs joining the touched files to the log's
                // statistics: the listed files carry theirs, and widening them only clears their tight bounds
                removedFiles = 0;
                long now = System.currentTimeMillis();
                for (TouchedFileWithDV file : CollectionConverters.asJava(touched)) {
                    removed += file.numberOfModifiedRows();
                    if (file.isFullyReplaced()) {
                        removedFiles += 1;
                        actions.add(file.fileLogEntry().removeWithTimestamp(now, true));
                    } else {
                        Tuple2<AddFile, RemoveFile> marked = file.fileLogEntry().removeRows(
                            file.newDeletionVector(), true, true);
                        actions.add(marked._1());
                        actions.add(marked._2());
                    }
                }
            } else {
                Tuple2<Seq<FileAction>, scala.collection.immutable.Map<String, Object>> result =
                    DMLWithDeletionVectorsHelper$.MODULE$.processUnmodifiedData(spark, touched, snapshot);
                actions.addAll(CollectionConverters.asJava(result._1()));
                removed = (Long) result._2().apply("numModifiedRows");
                removedFiles = (Long) result._2().apply("numRemovedFiles");
            }
            metrics.put("numRemovedFiles", metric("number of files removed", removedFiles));
        }
        metrics.put("numDeletedRows", metric("number of rows deleted", removed));
        metrics.put("numCopiedRows", metric("number of rows copied", 0));
        deleted.complete(new Deleted(CollectionConverters.asScala(actions).toSeq(), scalaMap(metrics)));
    }

    /**
     * Whether the checksum file of the latest version of the Delta table at {@code path} lists the table's files
     * (Delta 4.0 writes them there for a table of up to {@code spark.databricks.delta.allFilesInCrc
     * .thresholdNumFiles} files): a replacement then needs no log replay.
     */
    public static boolean listsFiles(SparkSession spark, String path) {
        return checksumFiles(DeltaLog.forTable(spark, path).update(false, Option.empty(), Option.empty())) != null;
    }

    /**
     * The table's files, with their statistics, from the checksum file of the snapshot's version; null when it
     * does not list them all with their row counts.
     */
    private static Seq<AddFile> checksumFiles(Snapshot snapshot) {
        Option<VersionChecksum> checksum = snapshot.checksumOpt();
        if (checksum.isEmpty() || checksum.get().allFiles().isEmpty()) {
            return null;
        }
        Seq<AddFile> files = checksum.get().allFiles().get();
        if (files.size() != checksum.get().numFiles()) {
            return null;
        }
        for (AddFile file : CollectionConverters.asJava(files)) {
            if (file.numPhysicalRecords().isEmpty()) {
                return null;
            }
        }
        return files;
    }

    /**
     * Whether widening each touched file's statistics (Delta's {@code updateStatsToWideBounds}) only clears their
     * tight bounds: none has both tight bounds and a deletion vector (whose all-null columns' null counts widening
     * raises to the physical row count). The files come from {@link #checksumFiles}: each has its statistics.
     */
    private static boolean widenable(Seq<TouchedFileWithDV> touched) {
        for (TouchedFileWithDV file : CollectionConverters.asJava(touched)) {
            AddFile add = file.fileLogEntry();
            if (add.deletionVector() != null && add.tightBounds().getOrElse(() -> true).equals(Boolean.TRUE)) {
                return false;
            }
        }
        return true;
    }

    private static <V> scala.collection.immutable.Map<String, V> scalaMap(Map<String, V> map) {
        return scala.collection.immutable.Map$.MODULE$.from(CollectionConverters.asScala(map));
    }

    private static <T> Seq<T> seq(T item) {
        return CollectionConverters.asScala(List.of(item)).toSeq();
    }

    /**
     * Write {@code rows} (in the table's schema) into the table and commit them with the delete, as a WRITE in
     * overwrite mode whose predicate is {@code description} and whose user metadata is {@code userMetadata}.
     * Returns the rows deleted and the rows written.
     */
    public long[] finish(Dataset<Row> rows, String description, String userMetadata) throws Exception {
        write(rows);
        return commit(description, userMetadata);
    }

    /**
     * Write {@code rows} (in the table's schema) into the table's folder, not committed yet: {@link #commit}
     * commits them with the delete; after {@link #abandon} they belong to no commit (a {@code VACUUM} removes
     * them).
     */
    public void write(Dataset<Row> rows) {
        OptimisticTransaction writer = log.startTransaction(Option.empty(), Option.apply(txn.snapshot()));
        OptimisticTransaction$.MODULE$.setActive(writer);
        try {
            written = writer.writeFiles(rows);
        } finally {
            OptimisticTransaction$.MODULE$.clearActive();
        }
    }

    /** Commit the rows {@link #write} wrote with the delete, as {@link #finish} does. */
    public long[] commit(String description, String userMetadata) throws Exception {
        if (written == null) {
            throw new IllegalStateException("no rows written to commit");
        }
        Deleted gone = await();
        List<Action> actions = new ArrayList<>(CollectionConverters.asJava(gone.actions()));
        long files = 0;
        long bytes = 0;
        long added = 0;
        for (FileAction action : CollectionConverters.asJava(written)) {
            actions.add(action);
            if (action instanceof AddFile add) {
                files += 1;
                bytes += add.size();
                Option<Object> records = add.numLogicalRecords();
                added += records.isDefined() ? (Long) records.get() : 0L;
            }
        }
        long removed = gone.metrics().get("numDeletedRows").map(SQLMetric::value).getOrElse(() -> 0L);
        Map<String, SQLMetric> metrics = new HashMap<>();
        for (String name : new String[] {"numRemovedFiles", "numRemovedBytes", "numDeletedRows", "numCopiedRows"}) {
            Option<SQLMetric> metric = gone.metrics().get(name);
            if (metric.isDefined()) {
                metrics.put(name, metric.get());
            }
        }
        metrics.put("numFiles", metric("number of files written", files));
        metrics.put("numOutputBytes", metric("number of output bytes", bytes));
        metrics.put("numOutputRows", metric("number of output rows", added));
        metrics.put("numAddedChangeFiles", metric("number of change files added", 0));
        txn.registerSQLMetrics(spark, scalaMap(metrics));
        DeltaOperations.Write operation = new DeltaOperations.Write(
            SaveMode.Overwrite, Option.empty(), Option.apply(description), Option.apply(userMetadata));
        OptimisticTransaction$.MODULE$.setActive(txn);
        try {
            txn.commitIfNeeded(CollectionConverters.asScala(actions).toSeq(), operation,
                               txn.commitIfNeeded$default$3());
        } finally {
            OptimisticTransaction$.MODULE$.clearActive();
        }
        return new long[] {removed, added};
    }

    /** Commit nothing: wait for the delete to end (its failure, if any, is not raised). */
    public void abandon() {
        try {
            deleted.get();
        } catch (InterruptedException exc) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException exc) {
            // nothing was committed: the failure of a delete that is not used does not matter
        }
    }

    private Deleted await() throws Exception {
        try {
            return deleted.get();
        } catch (ExecutionException exc) {
            Throwable cause = exc.getCause();
            if (cause instanceof Exception failure) {
                throw failure;
            }
            throw exc;
        }
    }

    private SQLMetric metric(String name, long value) {
        SQLMetric metric = SQLMetrics$.MODULE$.createMetric(spark.sparkContext(), name);
        metric.set(value);
        return metric;
    }
}
