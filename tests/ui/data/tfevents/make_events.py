"""How the event files beside this script were made (TensorFlow 2.21, without TensorBoard installed, so
``tf.summary.write`` with the scalars plugin's metadata, as ``tf.summary.scalar`` writes): run it in this
directory, then rename ``old.tfevents`` to ``events.out.tfevents.1.simple`` (a TF1-style ``simple_value``)."""

import tensorflow as tf
from tensorflow.core.framework import summary_pb2
from tensorflow.core.util import event_pb2

meta = summary_pb2.SummaryMetadata(plugin_data=summary_pb2.SummaryMetadata.PluginData(plugin_name="scalars"))
writer = tf.summary.create_file_writer("train")
with writer.as_default():
    for step in range(3):
        tf.summary.write("epoch_loss", tf.constant(1.0 / (step + 1)), step=step, metadata=meta)
        tf.summary.write("epoch_accuracy", tf.constant(0.5 + step * 0.1), step=step, metadata=meta)
writer.flush()
event = event_pb2.Event(wall_time=1.5, step=7, summary=summary_pb2.Summary(
    value=[summary_pb2.Summary.Value(tag="old_loss", simple_value=0.25)]))
with tf.io.TFRecordWriter("old.tfevents") as records:
    records.write(event.SerializeToString())
