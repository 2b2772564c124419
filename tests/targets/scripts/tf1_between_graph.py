"""TF1 between-graph replication: every replica builds its own graph; variables live on the parameter servers."""
import json
import os

import tensorflow as tf

tf.compat.v1.disable_eager_execution()
config = json.loads(os.environ["TF_CONFIG"])
task = config["task"]
cluster = tf.train.ClusterSpec(config["cluster"])
server = tf.distribute.Server(cluster, job_name=task["type"], task_index=task["index"], start=True)
if task["type"] == "ps":
    server.join()
device = f"/job:{task['type']}/task:{task['index']}"
with tf.compat.v1.device(tf.compat.v1.train.replica_device_setter(worker_device=device, cluster=cluster)):
    step = tf.compat.v1.train.get_or_create_global_step()
    w = tf.compat.v1.get_variable("w", initializer=0.0)
    loss = tf.square(w - 3.0)
    train = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=step)
hooks = [tf.compat.v1.train.StopAtStepHook(last_step=30)]
with tf.compat.v1.train.MonitoredTrainingSession(master=server.target, is_chief=task["type"] == "chief",
                                                 hooks=hooks) as session:
    while not session.should_stop():
        _, value = session.run([train, w])
print(f"{task['type']}-{task['index']} done, w = {value:.2f}", flush=True)
