// The client side of the Apache Kafka adapter: Kafka's own Java clients (Admin, producer,
// consumer) from the jars the set-up fetched, behind one JSON object per line on stdin/stdout.
// Python cannot see what this needs (per-record leader epochs, ELR, electLeaders, the
// producer's exact error classes) without a second client library; a JVM per command-line
// tool call would cost ~1.5 s each on a 2-core machine. Compiled at set-up into an ignored
// folder (traces/conformance/apache_kafka/install.py); it is our code, not Kafka's.
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.*;
import java.util.concurrent.*;
import org.apache.kafka.clients.admin.*;
import org.apache.kafka.clients.consumer.*;
import org.apache.kafka.clients.producer.*;
import org.apache.kafka.common.*;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.RetriableException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

public final class KafkaDriver {
  static final ObjectMapper M = new ObjectMapper();
  static String bootstrap;
  static Admin admin;
  static final Map<String, KafkaProducer<String, String>> producers = new HashMap<>();
  static KafkaConsumer<String, String> consumer;

  public static void main(String[] args) throws Exception {
    bootstrap = args[0];
    PrintStream out = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), true, "UTF-8");
    System.setOut(System.err); // clients log to stderr; stdout carries answers only
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    String line;
    while ((line = in.readLine()) != null) {
      if (line.isBlank()) continue;
      ObjectNode ans = M.createObjectNode();
      try {
        JsonNode cmd = M.readTree(line);
        String op = cmd.path("op").asText();
        if (op.equals("stop")) { ans.put("ok", true); out.println(M.writeValueAsString(ans)); break; }
        handle(op, cmd, ans);
        ans.put("ok", true);
      } catch (Throwable t) {
        ans.removeAll();
        ans.put("ok", false);
        ans.put("error", oneLine(t));
      }
      out.println(M.writeValueAsString(ans));
    }
    closeAll();
    System.exit(0);
  }

  static String oneLine(Throwable t) {
    Throwable c = (t instanceof ExecutionException && t.getCause() != null) ? t.getCause() : t;
    return (c.getClass().getSimpleName() + ": " + c.getMessage()).replace('\n', ' ');
  }

  static Admin admin() {
    if (admin == null) {
      Properties p = new Properties();
      p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
      p.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "3000");
      p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "6000");
      p.put(AdminClientConfig.RETRY_BACKOFF_MS_CONFIG, "100");
      admin = Admin.create(p);
    }
    return admin;
  }

  static KafkaProducer<String, String> producer(String acks, boolean idem, int deliveryMs) {
    String key = acks + "/" + idem + "/" + deliveryMs;
    return producers.computeIfAbsent(key, k -> {
      Properties p = new Properties();
      p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
      p.put(ProducerConfig.ACKS_CONFIG, acks);
      p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, Boolean.toString(idem));
      p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, Integer.toString(deliveryMs));
      p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, Integer.toString(Math.max(500, deliveryMs / 3)));
      p.put(ProducerConfig.LINGER_MS_CONFIG, "0");
      p.put(ProducerConfig.RETRY_BACKOFF_MS_CONFIG, "100");
      p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, Integer.toString(deliveryMs));
      p.put("metadata.max.age.ms", "1000");
      p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
      p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
      return new KafkaProducer<>(p);
    });
  }

  static KafkaConsumer<String, String> consumer() {
    if (consumer == null) {
      Properties p = new Properties();
      p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
      p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
      p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "none");
      p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_uncommitted");
      p.put(ConsumerConfig.REQUEST_TIMEOUT_MS_CONFIG, "3000");
      p.put(ConsumerConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "3000");
      p.put("metadata.max.age.ms", "1000");
      p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
      p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
      consumer = new KafkaConsumer<>(p);
    }
    return consumer;
  }

  static void closeAll() {
    for (KafkaProducer<String, String> p : producers.values()) p.close(Duration.ofMillis(500));
    producers.clear();
    if (consumer != null) consumer.close(Duration.ofMillis(500));
    consumer = null;
    if (admin != null) admin.close(Duration.ofMillis(500));
    admin = null;
  }

  static double now() { return System.currentTimeMillis() / 1000.0; }

  static void handle(String op, JsonNode c, ObjectNode ans) throws Exception {
    switch (op) {
      case "create": create(c); break;
      case "produce": produce(c, ans); break;
      case "poll": poll(c, ans); break;
      case "describe": describe(c, ans); break;
      case "offsets": offsets(c, ans); break;
      case "elect": elect(c, ans); break;
      case "delete": delete(c, ans); break;
      case "reassign": reassign(c, ans); break;
      case "ping": admin().describeCluster().nodes().get(5, TimeUnit.SECONDS); break;
      case "reset": closeAll(); break;
      default: throw new IllegalArgumentException("unknown op " + op);
    }
  }

  // create: topic with explicit replica assignment (R1 placement computed by the caller)
  static void create(JsonNode c) throws Exception {
    String topic = c.path("topic").asText();
    Map<Integer, List<Integer>> assign = new HashMap<>();
    JsonNode a = c.path("assignments");
    for (int i = 0; i < a.size(); i++) {
      List<Integer> rs = new ArrayList<>();
      for (JsonNode r : a.get(i)) rs.add(r.asInt());
      assign.put(i, rs);
    }
    Map<String, String> cfg = new HashMap<>();
    c.path("configs").fields().forEachRemaining(e -> cfg.put(e.getKey(), e.getValue().asText()));
    NewTopic nt = new NewTopic(topic, assign).configs(cfg);
    admin().createTopics(List.of(nt)).all().get(20, TimeUnit.SECONDS);
  }

  // produce: every value sent, then every answer awaited; one op per record (history form)
  static void produce(JsonNode c, ObjectNode ans) throws Exception {
    String topic = c.path("topic").asText();
    int partition = c.path("partition").asInt();
    String acks = c.path("acks").asText("all");
    boolean idem = c.path("idempotent").asBoolean(false);
    int deliveryMs = c.path("delivery_timeout_ms").asInt(6000);
    KafkaProducer<String, String> p = producer(acks, idem, deliveryMs);
    List<Future<RecordMetadata>> fs = new ArrayList<>();
    ArrayNode ops = ans.putArray("results");
    List<String> values = new ArrayList<>();
    List<Double> starts = new ArrayList<>();
    for (JsonNode v : c.path("values")) {
      values.add(v.asText());
      starts.add(now());
      try {
        fs.add(p.send(new ProducerRecord<>(topic, partition, null, v.asText())));
      } catch (Exception e) {
        fs.add(CompletableFuture.failedFuture(e));
      }
    }
    for (int i = 0; i < fs.size(); i++) {
      ObjectNode o = ops.addObject();
      o.put("value", values.get(i));
      o.put("invoke_time", starts.get(i));
      try {
        RecordMetadata md = fs.get(i).get(deliveryMs + 5000L, TimeUnit.MILLISECONDS);
        o.put("type", "ok");
        o.put("offset", md.offset());
      } catch (ExecutionException | java.util.concurrent.TimeoutException e) {
        Throwable cause = e instanceof ExecutionException ? e.getCause() : e;
        // a time-out or a retriable error left over at the deadline: the write may have
        // happened (Jepsen's :info); anything else is a definite refusal (:fail)
        boolean indeterminate = cause instanceof TimeoutException || cause instanceof RetriableException
            || cause instanceof java.util.concurrent.TimeoutException;
        o.put("type", indeterminate ? "info" : "fail");
        o.put("error", cause.getClass().getSimpleName());
      }
      o.put("time", now());
    }
  }

  // poll: read a partition from `from` up to its end offset (the HW for read_uncommitted)
  static void poll(JsonNode c, ObjectNode ans) throws Exception {
    String topic = c.path("topic").asText();
    int partition = c.path("partition").asInt();
    long from = c.path("from").asLong(0);
    long maxMs = c.path("max_ms").asLong(3000);
    TopicPartition tp = new TopicPartition(topic, partition);
    KafkaConsumer<String, String> k = consumer();
    k.assign(List.of(tp));
    // (R12: below the log start, DeleteRecords or retention removed it: read from there, and
    // say so, where a seek below it would be OFFSET_OUT_OF_RANGE; auto.offset.reset is none)
    long begin = k.beginningOffsets(List.of(tp), Duration.ofMillis(maxMs)).get(tp);
    if (from < begin) from = begin;
    ans.put("from", from);
    k.seek(tp, from);
    ans.put("invoke_time", now());
    long end = k.endOffsets(List.of(tp), Duration.ofMillis(maxMs)).get(tp);
    ans.put("hw", end);
    ArrayNode recs = ans.putArray("records");
    long deadline = System.currentTimeMillis() + maxMs;
    long pos = from;
    while (pos < end && System.currentTimeMillis() < deadline) {
      for (ConsumerRecord<String, String> r : k.poll(Duration.ofMillis(200)).records(tp)) {
        ArrayNode e = recs.addArray();
        e.add(r.offset());
        e.add(r.value());
        e.add(r.leaderEpoch().orElse(-1));
        pos = r.offset() + 1;
      }
    }
    ans.put("complete", pos >= end);
    ans.put("time", now());
  }

  static void describe(JsonNode c, ObjectNode ans) throws Exception {
    String topic = c.path("topic").asText();
    TopicDescription d = admin().describeTopics(List.of(topic)).allTopicNames().get(5, TimeUnit.SECONDS).get(topic);
    ArrayNode ps = ans.putArray("partitions");
    for (TopicPartitionInfo i : d.partitions()) {
      ObjectNode o = ps.addObject();
      o.put("partition", i.partition());
      o.put("leader", i.leader() == null || i.leader().isEmpty() ? -1 : i.leader().id());
      ArrayNode isr = o.putArray("isr");
      for (Node n : i.isr()) isr.add(n.id());
      ArrayNode elr = o.putArray("elr");
      for (Node n : i.elr()) elr.add(n.id());
      ArrayNode reps = o.putArray("replicas");
      for (Node n : i.replicas()) reps.add(n.id());
    }
    ans.put("time", now());
  }

  // offsets: each partition's latest offset (the HW) with the leader epoch of that answer
  static void offsets(JsonNode c, ObjectNode ans) throws Exception {
    String topic = c.path("topic").asText();
    int n = c.path("partitions").asInt(1);
    Map<TopicPartition, OffsetSpec> q = new HashMap<>();
    // (earliest: the log start offset instead, R12: what DeleteRecords moved)
    boolean earliest = c.path("earliest").asBoolean(false);
    for (int i = 0; i < n; i++) q.put(new TopicPartition(topic, i), earliest ? OffsetSpec.earliest() : OffsetSpec.latest());
    Map<TopicPartition, ListOffsetsResult.ListOffsetsResultInfo> r = admin().listOffsets(q).all().get(5, TimeUnit.SECONDS);
    ArrayNode ps = ans.putArray("partitions");
    for (int i = 0; i < n; i++) {
      ListOffsetsResult.ListOffsetsResultInfo info = r.get(new TopicPartition(topic, i));
      ObjectNode o = ps.addObject();
      o.put("partition", i);
      o.put(earliest ? "log_start" : "hw", info.offset());
      o.put("leader_epoch", info.leaderEpoch().orElse(-1));
    }
  }

  // elect: Admin electLeaders (PREFERRED: the first assigned replica, Kafka's preferred leader)
  static void elect(JsonNode c, ObjectNode ans) throws Exception {
    String topic = c.path("topic").asText();
    Set<TopicPartition> tps = new HashSet<>();
    for (JsonNode p : c.path("partitions")) tps.add(new TopicPartition(topic, p.asInt()));
    ElectionType type = c.path("type").asText("preferred").equals("unclean") ? ElectionType.UNCLEAN : ElectionType.PREFERRED;
    Map<TopicPartition, Optional<Throwable>> r = admin().electLeaders(type, tps).partitions().get(10, TimeUnit.SECONDS);
    ObjectNode res = ans.putObject("results");
    for (Map.Entry<TopicPartition, Optional<Throwable>> e : r.entrySet())
      res.put(Integer.toString(e.getKey().partition()), e.getValue().map(KafkaDriver::oneLine).orElse("ok"));
  }

  // reassign: Admin alterPartitionReassignments (KIP-455) of each partition to `replicas`, or,
  // without them, a cancel (Optional.empty(): kafka-reassign-partitions --cancel); the answer
  // per partition is "ok" or the error's class. Then, with `wait_ms`, listPartitionReassignments
  // until none of them is in progress (the completion, or the cancel, is in the metadata):
  // `done` says whether that happened in time, `in_progress` what was still moving.
  static void reassign(JsonNode c, ObjectNode ans) throws Exception {
    String topic = c.path("topic").asText();
    Optional<NewPartitionReassignment> target = Optional.empty();
    if (c.has("replicas")) {
      List<Integer> rs = new ArrayList<>();
      for (JsonNode r : c.path("replicas")) rs.add(r.asInt());
      target = Optional.of(new NewPartitionReassignment(rs));
    }
    Map<TopicPartition, Optional<NewPartitionReassignment>> q = new HashMap<>();
    for (JsonNode p : c.path("partitions")) q.put(new TopicPartition(topic, p.asInt()), target);
    Map<TopicPartition, KafkaFuture<Void>> r = admin().alterPartitionReassignments(q).values();
    ObjectNode res = ans.putObject("results");
    for (Map.Entry<TopicPartition, KafkaFuture<Void>> e : r.entrySet()) {
      String key = Integer.toString(e.getKey().partition());
      try {
        e.getValue().get(15, TimeUnit.SECONDS);
        res.put(key, "ok");
      } catch (ExecutionException ex) {
        res.put(key, ex.getCause().getClass().getSimpleName());
      }
    }
    ans.put("time", now());
    long waitMs = c.path("wait_ms").asLong(0);
    long deadline = System.currentTimeMillis() + waitMs;
    boolean done = false;
    ArrayNode moving = ans.putArray("in_progress");
    while (waitMs > 0) {
      Map<TopicPartition, PartitionReassignment> cur =
          admin().listPartitionReassignments(q.keySet()).reassignments().get(5, TimeUnit.SECONDS);
      if (cur.isEmpty()) { done = true; break; }
      if (System.currentTimeMillis() > deadline) {
        for (TopicPartition tp : cur.keySet()) moving.add(tp.partition());
        break;
      }
      Thread.sleep(100);
    }
    ans.put("done", done);
    ans.put("done_time", now());
  }

  // delete: Admin deleteRecords (KIP-107) up to `offset` (-1: the HW) on each partition; the
  // answer per partition is its new low watermark (the log start every replica has reached),
  // or the error's class (OffsetOutOfRangeException above the HW, ...)
  static void delete(JsonNode c, ObjectNode ans) throws Exception {
    String topic = c.path("topic").asText();
    long offset = c.path("offset").asLong(-1);
    Map<TopicPartition, RecordsToDelete> q = new HashMap<>();
    for (JsonNode p : c.path("partitions")) q.put(new TopicPartition(topic, p.asInt()), RecordsToDelete.beforeOffset(offset));
    Map<TopicPartition, KafkaFuture<DeletedRecords>> r = admin().deleteRecords(q).lowWatermarks();
    ObjectNode res = ans.putObject("results");
    for (Map.Entry<TopicPartition, KafkaFuture<DeletedRecords>> e : r.entrySet()) {
      String key = Integer.toString(e.getKey().partition());
      try {
        res.put(key, e.getValue().get(15, TimeUnit.SECONDS).lowWatermark());
      } catch (ExecutionException ex) {
        res.put(key, ex.getCause().getClass().getSimpleName());
      }
    }
    ans.put("time", now());
  }
}
